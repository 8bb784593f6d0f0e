// Marks the page as scripted before it is drawn (CSS hides no-script fallbacks); a file, since the CSP allows no inline script.
document.documentElement.classList.add("js");
