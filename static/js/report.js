/* Report page behaviour: copy buttons and the token-speed simulator. No inline script (CSP). */
(function () {
  "use strict";

  // Elements given their listeners (not a data attribute: htmx's history snapshot would keep the mark and drop
  // the listeners, so a restored page's buttons would stay dead).
  var bound = new WeakSet();

  function setupCopyButtons(root) {
    root.querySelectorAll("button.copy[data-copy-target]").forEach(function (button) {
      if (bound.has(button)) return;
      bound.add(button);
      button.hidden = false;  // rendered hidden: without JavaScript a copy button would do nothing
      button.addEventListener("click", function () {
        var source = document.getElementById(button.dataset.copyTarget);
        if (!source) return;
        var label = button.textContent;
        function show(text) {
          button.textContent = text;
          setTimeout(function () { button.textContent = label; }, 1500);
        }
        // Without the clipboard API (plain HTTP) or its permission, the command is selected for Ctrl+C instead of
        // the click doing nothing.
        function selectCommand() {
          var range = document.createRange();
          range.selectNodeContents(source);
          var selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          show(button.dataset.selectedLabel || label);
        }
        if (!navigator.clipboard) { selectCommand(); return; }
        navigator.clipboard.writeText(source.innerText).then(function () {
          show(button.dataset.copiedLabel || "Copied");
        }, selectCommand);
      });
    });
  }

  var reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function setupSimulator(root) {
    root.querySelectorAll(".simulator").forEach(function (box) {
      if (bound.has(box)) return;
      bound.add(box);
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

  // The language switch keeps the state: after htmx pushed or replaced the URL (the links were rendered with the
  // page's first one), each link becomes the current URL in its language. Paths differ only in their language
  // prefix (/de/search/ and /en/search/): the home page's search as you type moves from /de/ to /de/search/?model=…
  function syncLanguageLinks() {
    var path = window.location.pathname.replace(/^\/[^/]+/, "");
    document.querySelectorAll(".lang-switch a[hreflang]").forEach(function (link) {
      var url = new URL(link.href, window.location.href);
      var prefix = url.pathname.match(/^\/[^/]+/);
      if (prefix) url.pathname = prefix[0] + path;
      url.search = window.location.search;
      link.href = url.pathname + url.search;
    });
  }

  // Links that carry the page's state ("describe your own hardware") take the current query over their own
  // (they keep their own fields, such as the hardware's description).
  function syncStateLinks() {
    var current = new URLSearchParams(window.location.search);
    document.querySelectorAll("a[data-keeps-state]").forEach(function (link) {
      var url = new URL(link.href, window.location.href);
      current.forEach(function (value, name) { url.searchParams.set(name, value); });
      link.href = url.pathname + url.search;
    });
  }

  // htmx restores a page from its history snapshot, whose form controls show the values they were rendered with,
  // not the state of the URL it restores (Back after three changes showed the first page's selects beside the
  // second page's results). The URL is the state: the pushed URLs carry every field of the form.
  function syncFormsWithUrl() {
    var params = new URLSearchParams(window.location.search);
    document.querySelectorAll("form[hx-get]").forEach(function (form) {
      form.reset();  // the values the page was rendered with: right for a URL without a query
      if (!window.location.search) return;
      Array.prototype.forEach.call(form.elements, function (control) {
        if (!control.name) return;
        if (control.type === "checkbox" || control.type === "radio") {
          control.checked = params.getAll(control.name).indexOf(control.value) !== -1;
        } else if (params.has(control.name)) {
          control.value = params.get(control.name);
        }
      });
    });
  }

  // The server marks a field invalid when it renders the whole page; an htmx update swaps only the messages (out
  // of band): the field's class and its control's aria-invalid follow its message.
  function syncFieldErrors() {
    document.querySelectorAll(".field .field-error").forEach(function (slot) {
      var field = slot.closest(".field");
      var invalid = slot.textContent.trim() !== "";
      field.classList.toggle("has-error", invalid);
      field.querySelectorAll("input, select, textarea").forEach(function (control) {
        if (invalid) {
          control.setAttribute("aria-invalid", "true");
          control.setAttribute("aria-describedby", slot.id);
        } else {
          control.removeAttribute("aria-invalid");
        }
      });
    });
  }

  // One short announcement per update (the verdict), not the whole report re-read.
  var statusTimer = null;
  function announceVerdict() {
    var status = document.getElementById("results-status");
    var verdict = document.querySelector("#results .verdict-banner, #results #invalid-input h2, #results h2");
    if (status && verdict) {
      status.textContent = verdict.textContent.replace(/\s+/g, " ").trim();
      // On one column the text shows at the foot of the screen (site.css): it goes after a few seconds.
      clearTimeout(statusTimer);
      statusTimer = setTimeout(function () { status.textContent = ""; }, 5000);
    }
  }

  document.addEventListener("DOMContentLoaded", function () { setup(document); });
  document.addEventListener("htmx:pushedIntoHistory", function () { syncLanguageLinks(); syncStateLinks(); });
  document.addEventListener("htmx:replacedInHistory", function () { syncLanguageLinks(); syncStateLinks(); });
  document.addEventListener("htmx:historyRestore", function () {
    syncFormsWithUrl();
    syncFieldErrors();
    syncLanguageLinks();
    syncStateLinks();
    setup(document);
  });
  // An invalid configuration comes back as 400 with the results partial and the field errors (out of band):
  // swap it like a success (htmx 2 drops 4xx bodies by default), so the message appears beside the field.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 400) { event.detail.shouldSwap = true; event.detail.isError = false; }
  });
  // A change swaps the answer at once and loads the longer sections in a second request: until they arrive their
  // placeholder keeps the height they had, so a reader scrolled down to them is not thrown up the page.
  // The results region keeps its height until htmx has settled the swap, and only then hands it to the placeholder:
  // a layout in between would clamp the scroll.
  var detailsHeight = 0;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var results = event.detail.target;
    if (results.id !== "results" || !event.detail.shouldSwap) return;  // no swap, no settle to undo it
    var details = document.getElementById("details");
    detailsHeight = details ? details.offsetHeight : 0;
    results.style.minHeight = results.offsetHeight + "px";
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.target.id !== "results") return;
    var placeholder = document.getElementById("details");
    if (detailsHeight && placeholder && placeholder.getAttribute("aria-busy") === "true") {
      placeholder.style.minHeight = detailsHeight + "px";
    }
    event.target.removeAttribute("style");  // not style="" either: see htmx:beforeHistorySave
  });

  // htmx's history snapshot is HTML: a style attribute in it would be applied as inline style on restore, which the
  // CSP blocks. The heights leave the page while it is copied and come back before anything is laid out.
  document.addEventListener("htmx:beforeHistorySave", function () {
    var held = [];
    document.querySelectorAll("#results, #details").forEach(function (element) {
      if (!element.hasAttribute("style")) return;  // an empty style="" is an inline style to the CSP too
      if (element.style.minHeight) { held.push([element, element.style.minHeight]); }
      element.removeAttribute("style");
    });
    if (held.length) {
      queueMicrotask(function () { held.forEach(function (pair) { pair[0].style.minHeight = pair[1]; }); });
    }
  });

  // A state is asked for once: a number typed into the configurator is sent once it rests (input … delay:400ms),
  // and leaving the field ("change") or pressing Enter ("submit") then asked for the same state again, which sent
  // the results and the details twice and pushed a second history entry; the home search's Enter after the typed
  // query had been sent did the same. A form's request is dropped when it asks for what the form last asked for;
  // going back in history forgets that (the restored page's state is an older one).
  var lastAsked = new WeakMap();
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt;
    if (!form || !form.matches || !form.matches("#configurator, form.picker")) return;
    var config = event.detail.requestConfig || {};
    var asked = (config.path || "") + "?" + new URLSearchParams(config.formData || new FormData(form)).toString();
    if (lastAsked.get(form) === asked) { event.preventDefault(); return; }
    lastAsked.set(form, asked);
  });
  document.addEventListener("htmx:historyRestore", function () { lastAsked = new WeakMap(); });
  // An answer that did not come (network) or failed (5xx) can be asked for again.
  ["htmx:sendError", "htmx:responseError"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      if (event.detail.elt) { lastAsked.delete(event.detail.elt); }
    });
  });

  // A change closes every section the swap replaces: the ones the reader had opened ("How it was computed", the
  // chart's table, the further cloud offers) open again when their new copies arrive (the details come in a second
  // request). A section is known by the card it is in and its place there.
  var openSections = null;
  function sectionKey(element) {
    var card = element.closest("section[id]");
    var all = card ? card.querySelectorAll("details") : [];
    return (card ? card.id : "") + ":" + Array.prototype.indexOf.call(all, element);
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target.id !== "results" || !event.detail.shouldSwap) return;
    openSections = new Set();
    document.querySelectorAll("#results details[open]").forEach(function (element) {
      openSections.add(sectionKey(element));
    });
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!openSections) return;
    document.querySelectorAll("#results details:not([open])").forEach(function (element) {
      if (openSections.has(sectionKey(element))) { element.open = true; }
    });
    if (!document.querySelector('#details[aria-busy="true"]')) { openSections = null; }  // the details are in
  });

  // The model and hardware tables: their summary line ("12 of 49 accelerators shown; …") is announced from the
  // live region outside the table, which stays in the page while htmx swaps the table. The sort follows it
  // ("Sorted by Decode, descending.", the sorted header's data-sort-status): a new sort leaves the summary as it
  // was, and a live region whose text does not change announces nothing.
  function announceTable() {
    var status = document.getElementById("table-status");
    var summary = document.querySelector("#table .table-summary");
    if (!status || !summary) return;
    var sorted = document.querySelector("#table th[data-sort-status]");
    var text = summary.textContent + (sorted ? " " + sorted.getAttribute("data-sort-status") : "");
    status.textContent = text.replace(/\s+/g, " ").trim();
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    setup(event.target);
    syncFieldErrors();
    if (event.target.id === "results") { announceVerdict(); }
    if (event.target.id === "table") { announceTable(); }
  });
})();
