// Submits a filter form when one of its <select data-autosubmit> changes (no inline handlers: the CSP allows none).
(function () {
  "use strict";
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      select.form.submit();
    });
  });
})();
