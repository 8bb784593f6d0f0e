// Keyboard shortcuts of the rating page: 1, 2, 3 choose; Enter submits; S skips.
// Typing in the comment box or the flag menu is left alone.
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  const skipForm = document.getElementById("skip-form");
  const hint = document.getElementById("keyboard-hint");
  const guidelines = document.getElementById("guidelines");
  // The guidelines start collapsed (phones); where there is room they are shown at once.
  if (guidelines && window.matchMedia("(min-width: 760px)").matches) {
    guidelines.open = true;
  }
  if (!form) {
    return;
  }
  const choices = Array.from(form.querySelectorAll("input[name=judgement]"));

  function typing(target) {
    return target.closest("textarea, select, input[type=text]") !== null;
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) {
      return;
    }
    const index = ["1", "2", "3"].indexOf(event.key);
    if (index >= 0 && choices[index]) {
      choices[index].checked = true;
      choices[index].focus();
      event.preventDefault();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (choices.some(function (choice) { return choice.checked; })) {
        form.requestSubmit();
      } else if (hint) {
        hint.textContent = "Choose 1, 2 or 3 first.";
      }
    } else if ((event.key === "s" || event.key === "S") && skipForm) {
      event.preventDefault();
      skipForm.requestSubmit();
    }
  });
})();
