// governor ui: refresh the page's <main> in place every data-refresh-s seconds.
// The server renders every page; this script only fetches the same address again and
// swaps the new <main> in when it changed. It never builds markup from strings:
// DOMParser parses the server's (already escaped) page, whose scripts never run.
// A page is "the same" whatever its one-time form token (a new one comes with every
// render). While a person edits a form, nothing is swapped: their text is never lost.
"use strict";

(function () {
  const every = Number(document.body.dataset.refreshS || "0") * 1000;
  const stamp = document.getElementById("refreshed");
  if (!(every > 0) || !stamp) {
    return;
  }
  let last = null;
  let busy = false;

  function same(text) {
    return text.replace(/ name="csrf" value="[^"]*"/g, "");
  }

  function editing() {
    const main = document.querySelector("main");
    if (!main) {
      return false;
    }
    const focused = document.activeElement;
    if (focused && main.contains(focused) && focused.matches("input, textarea, select")) {
      return true;
    }
    return Array.prototype.some.call(main.querySelectorAll("input, textarea, select"), function (f) {
      if (f.type === "hidden") {
        return false;
      }
      if (f.type === "checkbox" || f.type === "radio") {
        return f.checked !== f.defaultChecked;
      }
      if (f.tagName === "SELECT") {  // unmarked, the first option is the default
        const marked = Array.prototype.findIndex.call(f.options, function (o) { return o.defaultSelected; });
        return f.selectedIndex !== (marked === -1 ? 0 : marked);
      }
      return f.value !== f.defaultValue;
    });
  }

  function swap(text) {
    const fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
    const old = document.querySelector("main");
    if (!fresh || !old) {
      return;
    }
    // a details keeps the state the person gave it, unless the server changed its default
    const kept = new Map();
    old.querySelectorAll("details[id]").forEach(function (d) { kept.set(d.id, d); });
    fresh.querySelectorAll("details[id]").forEach(function (d) {
      const before = kept.get(d.id);
      if (before && before.dataset.default === d.dataset.default) {
        d.open = before.open;
      } else if (!before && d.dataset.default === undefined) {
        d.open = false;
      }
    });
    old.replaceWith(document.importNode(fresh, true));
  }

  async function refresh() {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    try {
      const response = await fetch(window.location.href, {
        cache: "no-store",
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      const text = await response.text();
      if (last === null) {
        last = same(text);
      } else if (same(text) !== last) {
        if (editing()) {
          document.body.classList.remove("offline");
          stamp.textContent = "not refreshed while you edit a form";
          return;
        }
        last = same(text);
        swap(text);
      }
      document.body.classList.remove("offline");
      stamp.textContent = "refreshed " + new Date().toLocaleTimeString();
    } catch (error) {
      document.body.classList.add("offline");
      stamp.textContent = "cannot reach the server; retrying";
    } finally {
      busy = false;
    }
  }

  window.setInterval(refresh, every);
  document.addEventListener("visibilitychange", refresh);
})();
