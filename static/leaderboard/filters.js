// Instant filters: a change in the filter form, a sort link or the search box fetches only the page's
// main content (the server answers the X-Page-Fragment header with it) and swaps it in; the URL keeps
// the state, so reload, back/forward and shared links work. Without JavaScript the form's Apply button
// and plain links do the same with full page loads.
(function () {
  "use strict";
  var body = document.getElementById("page-body");
  if (!body || !window.fetch || !window.history.pushState) { return; }
  var pending = null;
  var typingTimer = null;
  // What the body shows and what is on its way, as absolute URLs. An Enter after the typed search has
  // already started (a slow machine, a slow typist) asks for the same board again: it is not fetched
  // twice, or the second answer would be swapped in over whatever the visitor did with the first.
  var shownUrl = absolute(window.location.href);
  var pendingUrl = null;

  function absolute(url) { return new URL(url, window.location.href).href; }

  function formUrl(form) {
    var params = new URLSearchParams();
    // The version menu always has a value; it goes into the URL only when it was there or was changed,
    // so that the default version keeps its short URL (and its cached page).
    var version = form.elements.namedItem("dataset");
    var implicitVersion = version && !new URLSearchParams(window.location.search).has("dataset") &&
      version.value === version.dataset.initial;
    new FormData(form).forEach(function (value, name) {
      if (value === "" || (name === "dataset" && implicitVersion)) { return; }
      params.append(name, value);
    });
    var query = params.toString();
    return window.location.pathname + (query ? "?" + query : "");
  }

  // A search still waiting for the visitor to stop typing would load the board again later, over
  // whatever came since: an Enter that searched already, or a link clicked on the result.
  function cancelTypedSearch() { window.clearTimeout(typingTimer); }

  // On a phone the filter form folds behind one button (leaderboard.css); once the visitor opens or
  // closes it, it stays so while the page body is swapped under each chip they tap.
  var filtersOpen = null;
  function showFiltersOpen() {
    var form = document.getElementById("filters");
    var button = form && form.querySelector(".filters-toggle");
    if (!button || filtersOpen === null) { return; }
    form.classList.toggle("open", filtersOpen);
    button.setAttribute("aria-expanded", String(filtersOpen));
  }
  body.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".filters-toggle");
    if (!button) { return; }
    filtersOpen = button.getAttribute("aria-expanded") !== "true";
    showFiltersOpen();
  });

  function load(url, push) {
    cancelTypedSearch();
    var target = absolute(url);
    // Back and forward always load: the URL has changed under a body that still shows the old one.
    if (push && (target === pendingUrl || (pending === null && target === shownUrl))) { return; }
    if (pending) { pending.abort(); }
    var controller = new AbortController();
    pending = controller;
    pendingUrl = target;
    var focused = document.activeElement && document.activeElement.id;
    var caret = focused && document.activeElement.selectionStart;
    body.setAttribute("aria-busy", "true");
    fetch(url, { headers: { "X-Page-Fragment": "1" }, signal: controller.signal })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        // A body with charts on a page that loaded without plotly needs a full load.
        if (typeof Plotly === "undefined" && html.indexOf("data-figure") >= 0) { window.location.href = url; return; }
        if (pending === controller) { pending = null; pendingUrl = null; }
        shownUrl = target;
        body.innerHTML = html;
        showFiltersOpen();
        if (push) { window.history.pushState({ fragment: true }, "", url); }
        if (window.NirdeshaFigures) { window.NirdeshaFigures.drawAll(); }
        var again = focused && document.getElementById(focused);
        if (again && again.type === "search") {
          again.focus();
          if (caret !== null && caret !== undefined) { again.setSelectionRange(caret, caret); }
        }
        body.removeAttribute("aria-busy");
        body.dispatchEvent(new CustomEvent("fragment-loaded", { bubbles: true }));
      })
      .catch(function (error) {
        if (error.name === "AbortError") { return; }
        if (pending === controller) { pending = null; pendingUrl = null; }
        window.location.href = url;
      });
  }

  body.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && form.id === "filters" && event.target.type !== "search") { load(formUrl(form), true); }
  });
  body.addEventListener("input", function (event) {
    var form = event.target.form;
    if (!form || form.id !== "filters" || event.target.type !== "search") { return; }
    window.clearTimeout(typingTimer);
    typingTimer = window.setTimeout(function () { load(formUrl(form), true); }, 250);
  });
  body.addEventListener("submit", function (event) {
    if (event.target.id !== "filters") { return; }
    event.preventDefault();
    load(formUrl(event.target), true);
  });
  body.addEventListener("click", function (event) {
    var link = event.target.closest("a.sort, a.reset-filters");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    event.preventDefault();
    load(link.href, true);
  });
  // Any other link leaves the page (or its fragment): the typed search must not bring it back.
  document.addEventListener("click", function (event) {
    if (!event.defaultPrevented && event.target.closest && event.target.closest("a[href]")) { cancelTypedSearch(); }
  });
  window.addEventListener("popstate", function () { load(window.location.href, false); });
})();
