// MathJax 2's start-up settings (Doxyfile MATHJAX_CODEFILE; Doxygen writes them after its own
// MathJax.Hub.Config): no "Loading / Typesetting math: N%" box while a page typesets. It sits
// over the bottom-left corner of the text, which on a phone is a good part of the first screen.
MathJax.Hub.Config({ messageStyle: "none" });
