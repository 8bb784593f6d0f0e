from django.contrib import admin

from evaluation.models import Dataset, EmbeddingModel, Item, Language, Run, Score


@admin.register(Language)
class LanguageAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "script", "family", "rtl", "is_source"]


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "license", "is_demo", "created_at"]
    readonly_fields = ["content_hash", "source", "created_at"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["dataset", "item_id", "language", "description"]
    list_filter = ["dataset", "language"]
    search_fields = ["persona", "instruction"]
    list_select_related = ["dataset", "language"]


@admin.register(EmbeddingModel)
class EmbeddingModelAdmin(admin.ModelAdmin):
    list_display = ["name", "display_name", "kind", "parameter_count", "is_local"]
    search_fields = ["name", "display_name"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "model", "dataset", "origin", "status", "progress", "created_at"]
    list_filter = ["status", "origin", "dataset"]
    list_select_related = ["model", "dataset"]
    raw_id_fields = ["submitted_by"]


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["run", "task", "source", "target", "metric", "value"]
    list_filter = ["task", "metric"]
    list_select_related = ["run__model", "source", "target"]
