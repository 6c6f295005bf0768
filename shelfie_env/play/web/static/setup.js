/* New-table page: choose seats, open the table, remember the seat links on this device. */
"use strict";

(() => {
  const { el, api, memory } = Shelfie;
  let meta = { bots: [], bot_tables: {}, max_name: 24, default_bot: null, bot_notes: {} };

  /** The bots that can play a table of ``n`` players. */
  function botsFor(n) {
    const tables = meta.bot_tables || {};
    return meta.bots.filter((b) => !tables[b] || tables[b].includes(n));
  }

  /** A bot's name as the menus say it: "td (the shipped self-taught bot)". */
  function botLabel(bot) {
    const note = (meta.bot_notes || {})[bot];
    return note ? bot + " (" + note + ")" : bot;
  }

  /** Fill a seat's menu with Person and the bots for ``n`` players, keeping the choice if it still fits. */
  function fillSeatMenu(type, i, n) {
    const before = type.value;
    type.replaceChildren(new Option("Person", "human"));
    const bots = botsFor(n);
    for (const bot of bots) type.appendChild(new Option("Bot: " + botLabel(bot), "bot:" + bot));
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

  function renderSeats() {
    const n = Number(document.getElementById("num-seats").value);
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
    const seats = Array.from(document.querySelectorAll("#seats .seat-row")).map((row) => {
      const kind = row.querySelector(".seat-type").value;
      const name = row.querySelector(".seat-name").value.trim();
      const seat = kind === "human" ? { type: "human" } : { type: "bot", bot: kind.slice(4) };
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

  async function init() {
    try {
      meta = await api("GET", "/api/meta");
    } catch (err) {
      document.getElementById("setup-error").textContent = "Cannot reach the server: " + err.message;
    }
    if (meta.default_bot) document.getElementById("default-bot").textContent = botLabel(meta.default_bot);
    document.getElementById("num-seats").addEventListener("change", renderSeats);
    document.getElementById("setup").addEventListener("submit", start);
    renderSeats();
    renderRecent();
    document.body.dataset.ready = "1";
  }

  init();
})();
