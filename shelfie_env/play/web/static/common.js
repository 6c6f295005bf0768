/* Shared helpers for the Shelfie pages: icons, the JSON API, small DOM builders.
   User-provided text is only ever placed with textContent (never innerHTML). */
"use strict";

const Shelfie = (() => {
  const SYMBOLS = ["plant", "game", "book", "trophy", "cat"];
  const PLURALS = ["plants", "games", "books", "trophies", "cats"];
  const FACES = SYMBOLS.concat(["joker"]);
  const SVG_NS = "http://www.w3.org/2000/svg";

  // 24x24 line-art icons (our own drawings), one list of path strings per face.
  const ICONS = {
    plant: ["M8 14h8l-1.3 7H9.3z", "M12 14V9", "M12 11C12 7 9 5 5.5 5.5 5.5 9 8 11 12 11z",
      "M12 9c0-4 2.5-6.5 6.5-6.5 0 4-2.5 6.5-6.5 6.5z"],
    game: ["M12 2.5a3.2 3.2 0 1 1 0 6.4 3.2 3.2 0 0 1 0-6.4z",
      "M4 10.5h16l-4 3.5 2.5 7H14l-2-3.5-2 3.5H5.5L8 14z"],
    book: ["M5 4.5h11a2 2 0 0 1 2 2v13H7a2 2 0 0 1-2-2z", "M5 17.5a2 2 0 0 1 2-2h11", "M9 8h6"],
    trophy: ["M7 3.5h10v5a5 5 0 0 1-10 0z", "M7 5H4.2a3 3 0 0 0 3 4.2", "M17 5h2.8a3 3 0 0 1-3 4.2",
      "M12 13.5v4", "M8 20.5h8v-3H8z"],
    cat: ["M4.5 10 5.5 3l4.5 3.5h4L18.5 3l1 7a7.5 7 0 0 1-15 0z", "M9 11.5h.01", "M15 11.5h.01",
      "M11 14.5l1 1 1-1"],
    joker: ["M12 2.2l2.9 6.2 6.8.8-5 4.7 1.3 6.8L12 17.3l-6 3.4 1.3-6.8-5-4.7 6.8-.8z"],
  };

  /** An inline SVG icon for a face (0..5) or symbol name. */
  function icon(face, extraClass) {
    const name = typeof face === "number" ? FACES[face] : face;
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("class", "icon icon-" + name + (extraClass ? " " + extraClass : ""));
    svg.setAttribute("aria-hidden", "true");
    for (const d of ICONS[name]) {
      const path = document.createElementNS(SVG_NS, "path");
      path.setAttribute("d", d);
      svg.appendChild(path);
    }
    return svg;
  }

  /** Create an element with optional class and text (text is set with textContent). */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.message) || ("HTTP " + status));
      this.status = status;
      this.body = body || {};
    }
  }

  /** Call the JSON API; throws ApiError with the server's message on a 4xx/5xx answer. */
  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (!response.ok) throw new ApiError(response.status, data);
    // An answer cut off mid-body (the server stopped while sending it) is a lost connection.
    if (data === null) throw new TypeError("the server's answer was cut off");
    return data;
  }

  /** Canonical reroll id (docs/rules.md) for ``counts[face]`` dice of each face picked from the sorted ``dice``:
      among dice showing the same face, the highest positions are the ones rerolled. */
  function rerollId(dice, counts) {
    let id = 0;
    for (let face = 0; face < 6; face++) {
      const positions = [];
      dice.forEach((d, i) => { if (d === face) positions.push(i); });
      const k = Math.max(0, Math.min(counts[face] || 0, positions.length));
      for (const p of positions.slice(positions.length - k)) id |= 1 << p;
    }
    return id;
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /** ``x`` with ``decimals`` decimals; with ``signed`` a "+" or "−" in front. A value that rounds
      to zero prints without a sign ("0.00"), never as "-0.00". */
  function fixed(x, decimals, signed) {
    const text = Math.abs(x).toFixed(decimals);
    if (Number(text) === 0) return text;
    if (x < 0) return (signed ? "−" : "-") + text;
    return (signed ? "+" : "") + text;
  }

  /** Remembered games of this browser (links with tokens stay on this device). */
  const memory = {
    get(id) {
      try { return JSON.parse(localStorage.getItem("shelfie:game:" + id)) || null; } catch (_) { return null; }
    },
    set(id, value) {
      try { localStorage.setItem("shelfie:game:" + id, JSON.stringify(value)); } catch (_) { /* private mode */ }
    },
    recent() {
      try { return JSON.parse(localStorage.getItem("shelfie:recent")) || []; } catch (_) { return []; }
    },
    addRecent(entry) {
      const list = memory.recent().filter((g) => g.id !== entry.id);
      list.unshift(entry);
      try { localStorage.setItem("shelfie:recent", JSON.stringify(list.slice(0, 10))); } catch (_) { /* ignore */ }
    },
  };

  /** This browser's person key: made once (32 random URL-safe characters) and kept in local storage
      as "shelfie:person". It is sent, in request bodies only, with the seats this browser plays, so
      their games are rated as one person's (the server keeps only its hash); a seat this browser
      joined answers to it alone. */
  function personKey() {
    const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    try {
      let key = localStorage.getItem("shelfie:person");
      if (!key || !/^[A-Za-z0-9_-]{16,128}$/.test(key)) {
        const bytes = new Uint8Array(32);
        crypto.getRandomValues(bytes);
        key = Array.from(bytes, (b) => ALPHABET[b % 64]).join("");
        localStorage.setItem("shelfie:person", key);
      }
      return key;
    } catch (_) {
      return null; // no local storage (private mode): the games are not rated
    }
  }

  /** A level as the menus name it: "level-3 · intermediate · 1420" (``level`` from /api/meta's levels). */
  function levelLabel(level) {
    return level.spec + " · " + level.name + " · " + Math.round(level.rating);
  }

  /** "1432 ± 120 (+18)": a rating, its uncertainty and, if given, its change. */
  function ratingText(rating, rd, change) {
    const text = Math.round(rating) + " ± " + Math.round(rd);
    if (change === undefined || change === null) return text;
    const c = Math.round(change);
    return text + " (" + (c > 0 ? "+" : c < 0 ? "−" : "±") + Math.abs(c) + ")";
  }

  /** "24 hours", "90 minutes": a limit in seconds as a page says it. */
  function durationText(seconds) {
    if (seconds >= 3600) {
      const hours = Math.round(seconds / 360) / 10;
      return hours + (hours === 1 ? " hour" : " hours");
    }
    const minutes = Math.max(1, Math.round(seconds / 60));
    return minutes + (minutes === 1 ? " minute" : " minutes");
  }

  /** What makes a game count for a rating, in words (``rules``: /api/meta's rating_rules, or /api/person's rules). */
  function ratingRulesText(rules) {
    const left = rules.inactive_s
      ? "a player who makes no move for " + durationText(rules.inactive_s) + " loses the game by resignation"
      : "a player who stops moving loses the game by resignation when it expires";
    return "A rated game counts once it is played: " + left + "; against another person, a game resigned or left " +
      "before the player's " + rules.abort_decisions + "rd decision is aborted, unrated for both. Another person " +
      "counts as a rival once they have " + rules.established_games + " rated games at that table size and an " +
      "uncertainty of ±" + rules.established_rd + " or less.";
  }

  return { SYMBOLS, PLURALS, FACES, icon, el, api, ApiError, rerollId, sleep, fixed, memory, personKey,
    levelLabel, ratingText, durationText, ratingRulesText };
})();
