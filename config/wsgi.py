import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
# Bodies bounded in size and in time before Django reads any of them (config/limits.py).
from config.limits import GuardedBodyApplication

application = GuardedBodyApplication(get_wsgi_application())
