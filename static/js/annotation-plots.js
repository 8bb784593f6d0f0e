// Draws the figures that the server built with plotly.graph_objects and passed with json_script.
(function () {
  "use strict";
  document.querySelectorAll("[data-figure]").forEach(function (element) {
    const source = document.getElementById(element.dataset.figure);
    if (!source) {
      return;
    }
    const figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(element, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
