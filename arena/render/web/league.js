// The league page: tick or untick a bot in a legend to show or hide its line in the plot of
// ratings over time; hovering a legend entry brings its line forward. The plot is drawn in
// full without this script.
(function () {
  "use strict";
  document.querySelectorAll(".over-time").forEach(function (box) {
    var svg = box.querySelector("svg.history");
    if (!svg) { return; }
    function series(k) { return svg.querySelector('g.series[data-series="' + k + '"]'); }
    box.querySelectorAll(".legend input[type=checkbox]").forEach(function (input) {
      input.addEventListener("change", function () {
        var g = series(input.getAttribute("data-series"));
        if (g) { g.classList.toggle("hidden", !input.checked); }
      });
    });
    box.querySelectorAll(".legend label.entry").forEach(function (label) {
      var g = series(label.getAttribute("data-series"));
      if (!g) { return; }
      label.addEventListener("mouseenter", function () { svg.classList.add("focus"); g.classList.add("hl"); });
      label.addEventListener("mouseleave", function () { svg.classList.remove("focus"); g.classList.remove("hl"); });
    });
  });
}());
