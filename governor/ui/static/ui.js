// governor ui: refresh the page's <main> in place every data-refresh-s seconds.
// The server renders every page; this script only fetches the same address again and
// swaps the new <main> in when it changed. It never builds markup from strings:
// DOMParser parses the server's (already escaped) page, whose scripts never run.
"use strict";

(function () {
  const every = Number(document.body.dataset.refreshS || "0") * 1000;
  const stamp = document.getElementById("refreshed");
  if (!(every > 0) || !stamp) {
    return;
  }
  let last = null;
  let busy = false;

  function swap(text) {
    const fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
    const old = document.querySelector("main");
    if (!fresh || !old) {
      return;
    }
    const open = new Set();
    old.querySelectorAll("details[open][id]").forEach(function (d) { open.add(d.id); });
    fresh.querySelectorAll("details[id]").forEach(function (d) { d.open = open.has(d.id); });
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
        last = text;
      } else if (text !== last) {
        last = text;
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
