// "Try it" panels (docs/tryit.py): look up this build's exported weights and outputs for the
// state the reader picked; nothing is computed here.
(function () {
  if (window.vlTryIt) return;  // one script tag per panel: set up once
  window.vlTryIt = true;
  // Four decimals; three on a phone when a row has more than six keys, so that the row fits the
  // column (the exact value stays in each cell's data-value).
  function fmt(x, digits) { return x === 0 ? "0" : (Math.abs(x) >= 1e-3 ? x.toFixed(digits || 4).replace(/0+$/, "").replace(/\.$/, "") : x.toExponential(2)); }
  function narrow() { return window.matchMedia && window.matchMedia("(max-width: 800px)").matches; }
  function row(arr, first, r) {  // arr: {shape, data}; first index (head) or null
    var s = arr.shape, len = s[s.length - 1], off = (first === null ? r : first * s[1] + r) * len;
    return arr.data.slice(off, off + len);
  }
  function setup(panel) {
    var data = JSON.parse(panel.querySelector(".vl-try-data").textContent);
    var mask = panel.querySelector(".vl-try-mask"), h1 = panel.querySelector(".vl-try-headsel");
    var h2 = panel.querySelector(".vl-try-head2"), rs = panel.querySelector(".vl-try-row");
    if (h2.options.length > 1) h2.value = "1";
    function draw() {
      var st = data.states[mask && mask.checked ? "causal" : "unmasked"], r = +rs.value;
      var heads = [+h1.value, +h2.value], n = st.weights.shape[2];
      var head = '<tr><th>head<span class="vl-try-narrow"> \\ key</span></th>' + Array.from({length: n}, function (_, j) {
        return '<th><span class="vl-try-wide">key </span>' + j + "</th>"; }).join("") + "</tr>";
      panel.querySelector(".vl-try-table thead").innerHTML = head;
      panel.querySelector(".vl-try-table tbody").innerHTML = heads.map(function (h, k) {
        return '<tr class="vl-try-w' + k + '" data-head="' + h + '"><th>' + h + "</th>" + row(st.weights, h, r).map(function (v) {
          return '<td class="vl-num" data-value="' + v + '">' + fmt(v, narrow() && n > 6 ? 3 : 4) + "</td>"; }).join("") + "</tr>";
      }).join("");
      var out = panel.querySelector(".vl-try-output");
      out.innerHTML = st.output ? "output row " + r + " (" + (data.output_is || "after the output projection") + "): <code class=\"vl-try-y\" data-values=\"" +
        row(st.output, null, r).join(",") + "\">[" + row(st.output, null, r).map(function (v) { return fmt(v); }).join(", ") + "]</code>" : "";
      panel.setAttribute("data-state", (mask && mask.checked ? "causal" : "unmasked") + " " + h1.value + " " + r);
    }
    [mask, h1, h2, rs].forEach(function (el) { if (el) el.addEventListener("change", draw); });
    draw();
  }
  function init() { document.querySelectorAll(".vl-try").forEach(setup); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
