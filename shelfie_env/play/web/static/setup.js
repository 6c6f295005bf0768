/* New-table page: choose seats (a bot seat may take a level of the ladder, named with its rating),
   open the table, remember the seat links on this device. The first person seat is this browser's
   person (its key goes with it), so the games it plays are rated. */
"use strict";

(() => {
  const { el, api, memory, personKey, levelLabel, ratingText } = Shelfie;
  let meta = { bots: [], bot_tables: {}, max_name: 24, default_bot: null, bot_notes: {}, levels: {},
    first_level: null };
  let myRatings = {}; // this person's rating per table size ("2": {rating, rd, suggested_level, ...})

  /** The levels (with their ratings) of a table of ``n`` players. */
  function levelsFor(n) {
    return (meta.levels || {})[String(n)] || [];
  }

  /** The bots that can play a table of ``n`` players. */
  function botsFor(n) {
    const tables = meta.bot_tables || {};
    return meta.bots.filter((b) => !tables[b] || tables[b].includes(n));
  }

  /** A bot's name as the menus say it: "td (the shipped self-taught bot)", a level with its
      rating at the table's size: "level-3 · intermediate · 1420". */
  function botLabel(bot, n) {
    const level = levelsFor(n || 2).find((l) => l.spec === bot);
    if (level) return levelLabel(level);
    const note = (meta.bot_notes || {})[bot];
    return note ? bot + " (" + note + ")" : bot;
  }

  /** Fill a seat's menu with Person and the bots for ``n`` players, keeping the choice if it still fits. */
  function fillSeatMenu(type, i, n) {
    const before = type.value;
    type.replaceChildren(new Option("Person", "human"));
    const bots = botsFor(n);
    for (const bot of bots) type.appendChild(new Option("Bot: " + botLabel(bot, n), "bot:" + bot));
    if (Array.from(type.options).some((o) => o.value === before)) {
      type.value = before;
    } else if (i > 0 && bots.length) {
      const preferred = [meta.default_bot, "planner", "greedy", "random"].find((b) => bots.includes(b)) || bots[0];
      type.value = "bot:" + preferred;
    } else {
      type.value = "human";
    }
  }

  function seatRow(i) {
    const row = el("div", "seat-row");
    row.dataset.seat = String(i);
    const label = el("label", null, "Seat " + (i + 1));
    label.htmlFor = "seat-type-" + i;
    const type = el("select");
    type.id = "seat-type-" + i;
    type.className = "seat-type";
    fillSeatMenu(type, i, Number(document.getElementById("num-seats").value));
    const name = el("input", "seat-name");
    name.type = "text";
    name.maxLength = meta.max_name;
    name.placeholder = i === 0 ? "Your name" : "Name (optional)";
    name.setAttribute("aria-label", "Name of seat " + (i + 1));
    row.append(label, type, name);
    return row;
  }

  /** The level suggested at ``n`` players: the one nearest this person's rating there, else the middle one. */
  function suggestedLevel(n) {
    const mine = myRatings[String(n)];
    return (mine && mine.suggested_level) || meta.first_level;
  }

  /** The level menu of a table of ``n``: every level with its rating, the suggested one chosen. */
  function renderLevels(n) {
    const levels = levelsFor(n);
    const row = document.getElementById("level-row");
    const note = document.getElementById("level-note");
    row.classList.toggle("hidden", levels.length === 0);
    note.classList.toggle("hidden", levels.length === 0);
    if (!levels.length) return;
    const pick = document.getElementById("level-pick");
    pick.replaceChildren(...levels.map((l) => new Option(levelLabel(l), l.spec)));
    pick.value = suggestedLevel(n);
    const mine = myRatings[String(n)];
    note.textContent = mine
      ? "Suggested: the level nearest your rating at " + n + " players, " + ratingText(mine.rating, mine.rd) + "."
      : "Suggested for a first game: a middle level. Games against the levels are rated; hints make a game unrated.";
  }

  /** Every bot seat plays the chosen level. */
  function useLevel() {
    const spec = document.getElementById("level-pick").value;
    for (const type of document.querySelectorAll("#seats .seat-type")) {
      if (type.value.startsWith("bot:") && Array.from(type.options).some((o) => o.value === "bot:" + spec)) {
        type.value = "bot:" + spec;
      }
    }
  }

  function renderSeats() {
    const n = Number(document.getElementById("num-seats").value);
    renderLevels(n);
    const box = document.getElementById("seats");
    const old = Array.from(box.children);
    while (box.children.length > n) box.lastChild.remove();
    Array.from(box.children).forEach((row, i) => fillSeatMenu(row.querySelector(".seat-type"), i, n));
    for (let i = old.length; i < n; i++) box.appendChild(seatRow(i));
  }

  function renderRecent() {
    const list = document.getElementById("recent");
    list.replaceChildren();
    const games = memory.recent();
    document.getElementById("recent-panel").classList.toggle("hidden", games.length === 0);
    for (const g of games) {
      const li = el("li");
      const a = el("a", null, g.label || g.id);
      a.href = g.link;
      li.append(a, el("span", "muted", " — opened " + new Date(g.created).toLocaleString()));
      list.appendChild(li);
    }
  }

  async function start(event) {
    event.preventDefault();
    const error = document.getElementById("setup-error");
    error.textContent = "";
    const key = personKey();
    let mine = false;
    const seats = Array.from(document.querySelectorAll("#seats .seat-row")).map((row) => {
      const kind = row.querySelector(".seat-type").value;
      const name = row.querySelector(".seat-name").value.trim();
      const seat = kind === "human" ? { type: "human" } : { type: "bot", bot: kind.slice(4) };
      if (kind === "human" && !mine && key) {  // the first person seat is this browser's person
        seat.person = key;
        mine = true;
      }
      if (name) seat.name = name;
      return seat;
    });
    const button = document.getElementById("start");
    button.disabled = true;
    try {
      const view = await api("POST", "/api/games", { seats });
      const links = view.links || {};
      const humanSeats = Object.keys(links).map(Number).sort((a, b) => a - b);
      const mine = humanSeats.length ? humanSeats[0] : null;
      memory.set(view.game_id, { links, creator: true });
      const link = mine === null ? "/g/" + view.game_id : links[String(mine)];
      const label = view.seats.map((s) => s.name).join(" vs ");
      memory.addRecent({ id: view.game_id, link, label, created: Date.now() });
      window.location.assign(link);
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  }

  /** This person's ratings (they preselect the level nearest); the panel says them. */
  async function loadRatings() {
    const key = personKey();
    if (!key) return;
    try {
      myRatings = (await api("POST", "/api/person", { person: key })).ratings || {};
    } catch (_) {
      myRatings = {};
    }
    const sizes = Object.keys(myRatings).sort();
    if (sizes.length) {
      document.getElementById("my-rating").textContent = sizes.map((n) => n + " players: " +
        ratingText(myRatings[n].rating, myRatings[n].rd) + " after " + myRatings[n].games + " rated game" +
        (myRatings[n].games === 1 ? "" : "s")).join(" · ");
    }
  }

  async function init() {
    try {
      meta = await api("GET", "/api/meta");
    } catch (err) {
      document.getElementById("setup-error").textContent = "Cannot reach the server: " + err.message;
    }
    await loadRatings();
    document.getElementById("use-level").addEventListener("click", useLevel);
    if (meta.default_bot) document.getElementById("default-bot").textContent = botLabel(meta.default_bot);
    document.getElementById("num-seats").addEventListener("change", renderSeats);
    document.getElementById("setup").addEventListener("submit", start);
    renderSeats();
    renderRecent();
    document.body.dataset.ready = "1";
  }

  init();
})();
