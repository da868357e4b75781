/* Report page behaviour: copy buttons and the token-speed simulator. No inline script (CSP). */
(function () {
  "use strict";

  function setupCopyButtons(root) {
    root.querySelectorAll("button.copy[data-copy-target]").forEach(function (button) {
      if (button.dataset.bound) return;
      button.dataset.bound = "1";
      button.addEventListener("click", function () {
        var source = document.getElementById(button.dataset.copyTarget);
        if (!source || !navigator.clipboard) return;
        navigator.clipboard.writeText(source.innerText).then(function () {
          var label = button.textContent;
          button.textContent = button.dataset.copiedLabel || "Copied";
          setTimeout(function () { button.textContent = label; }, 1500);
        });
      });
    });
  }

  var reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function setupSimulator(root) {
    root.querySelectorAll(".simulator").forEach(function (box) {
      if (box.dataset.bound) return;
      box.dataset.bound = "1";
      var ttft = parseFloat(box.dataset.ttftMs);
      var rate = parseFloat(box.dataset.tokensPerS);
      var words = (box.dataset.sample || "").split(/\s+/).filter(Boolean);
      var output = box.querySelector(".sim-output");
      var counter = box.querySelector(".sim-counter");
      var button = box.querySelector(".sim-start");
      if (!output || !button || !(rate > 0) || !words.length) return;
      button.hidden = false;
      var timer = null;

      function run() {
        clearTimeout(timer);
        output.textContent = "";
        if (reducedMotion) {  // no animation: show the outcome at once
          output.textContent = words.join(" ");
          counter.textContent = box.dataset.labelDone || "";
          return;
        }
        counter.textContent = box.dataset.labelWaiting || "";
        var start = performance.now();
        var wait = isFinite(ttft) ? ttft : 0;
        var shown = 0;
        function tick() {
          var elapsed = performance.now() - start - wait;
          // Whole milliseconds, at least 1: a fractional remainder (TTFT 464.41 ms) would otherwise re-arm a
          // 0-ms timer that fires before any time passes, again and again.
          if (elapsed < 0) { timer = setTimeout(tick, Math.max(1, Math.min(Math.ceil(-elapsed), 100))); return; }
          // ~1.3 tokens per English word: advance words at rate / 1.3 per second
          var due = Math.min(words.length, Math.floor(elapsed / 1000 * rate / 1.3) + 1);
          if (due > shown) {
            output.textContent = words.slice(0, due).join(" ");
            shown = due;
            counter.textContent = (elapsed / 1000).toFixed(1) + " s";
          }
          if (shown < words.length) { timer = setTimeout(tick, 30); }
          else { counter.textContent = box.dataset.labelDone || ""; }
        }
        tick();
      }
      button.addEventListener("click", run);
    });
  }

  function setup(root) {
    setupCopyButtons(root);
    setupSimulator(root);
  }

  // The language switch keeps the configurator state: carry the current query string over after htmx
  // pushed a new URL (the links were rendered with the page's first state).
  function syncLanguageLinks() {
    document.querySelectorAll(".lang-switch a[hreflang]").forEach(function (link) {
      var url = new URL(link.href, window.location.href);
      url.search = window.location.search;
      link.href = url.pathname + url.search;
    });
  }

  document.addEventListener("DOMContentLoaded", function () { setup(document); });
  document.addEventListener("htmx:pushedIntoHistory", syncLanguageLinks);
  // An invalid configuration comes back as 400 with the results partial and the field errors (out of band):
  // swap it like a success (htmx 2 drops 4xx bodies by default), so the message appears beside the field.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 400) { event.detail.shouldSwap = true; event.detail.isError = false; }
  });
  document.addEventListener("htmx:afterSwap", function (event) { setup(event.target); });
})();
