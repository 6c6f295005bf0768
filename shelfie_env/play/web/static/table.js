/* The table page: shows the shelves and dice, sends the player's clicks as action ids,
   animates the other seats' moves one by one and shows the final scores.
   The server is authoritative: only ids the server listed as legal are ever clickable. */
"use strict";

(() => {
  const { SYMBOLS, PLURALS, FACES, icon, el, api, rerollId, sleep, memory } = Shelfie;
  const STOP = 0, CIRCLE_BASE = 64, END_TURN = 114, CROSS_BASE = 115;
  /** A timing setting: localStorage "shelfie:<key>" (ms) when set, else the default. */
  function setting(key, fallback) {
    const raw = localStorage.getItem("shelfie:" + key);
    const value = raw === null ? NaN : Number(raw);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  }
  const POLL_MS = Math.max(100, setting("poll", 1500)); // how often to look for others' moves
  const DELAY_MS = setting("delay", 700);                // pause after each of the others' moves

  const gameId = decodeURIComponent(window.location.pathname.split("/").pop());
  const remembered = memory.get(gameId) || {};
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  let mySeat = fragment.has("seat") ? Number(fragment.get("seat")) : (remembered.seat ?? null);
  let token = fragment.get("token") || remembered.token || null;
  if (mySeat !== null && !Number.isInteger(mySeat)) mySeat = null;
  if (token && mySeat !== null) memory.set(gameId, { ...remembered, seat: mySeat, token });

  let meta = { hint: false };
  let view = null;        // last view from the server
  let seats = [];         // seats of the game (names, kinds)
  let shown = 0;          // moves already shown in the log
  let busy = false;       // a request or an animation is running
  let rerollCounts = [0, 0, 0, 0, 0, 0]; // dice of each face picked for the reroll

  const $ = (id) => document.getElementById(id);

  function setBusy(value) {
    busy = value;
    document.body.dataset.ready = value ? "0" : "1";
  }

  function seatName(seat) {
    return seats[seat] ? seats[seat].name : "Seat " + (seat + 1);
  }

  function myTurn() {
    return view !== null && mySeat !== null && !view.over && view.state.current_player === mySeat;
  }

  function legalSet(interactive) {
    return interactive && myTurn() ? new Set(view.legal.map((m) => m.action)) : new Set();
  }

  // ------------------------------------------------------------------ rendering
  function renderDice(state, legal) {
    const box = $("dice");
    box.replaceChildren();
    const canPick = state.phase === "reroll" && legal.size > 0 && state.rolls_left > 0;
    const id = canPick ? rerollId(state.dice, rerollCounts) : 0;
    state.dice.forEach((face, i) => {
      const die = el("button", "die f-" + FACES[face]);
      die.type = "button";
      die.dataset.pos = String(i);
      die.dataset.face = FACES[face];
      die.appendChild(icon(face));
      const used = state.spent[i] && state.phase !== "reroll";
      if (used) die.classList.add("spent");
      if (id & (1 << i)) die.classList.add("selected");
      die.setAttribute("aria-label", FACES[face] + (face === 5 ? " (wild)" : "") + (used ? ", used" : ""));
      die.title = FACES[face] === "joker" ? "joker (wild)" : FACES[face];
      die.disabled = !canPick;
      if (canPick) {
        die.setAttribute("aria-pressed", id & (1 << i) ? "true" : "false");
        die.addEventListener("click", () => {
          rerollCounts[face] += id & (1 << i) ? -1 : 1;
          renderControls(state, legal);
          renderDice(state, legal);
        });
      }
      box.appendChild(die);
    });
  }

  function renderControls(state, legal) {
    const id = state.phase === "reroll" ? rerollId(state.dice, rerollCounts) : 0;
    const roll = $("roll");
    const n = rerollCounts.reduce((a, b) => a + b, 0);
    roll.disabled = !(id && legal.has(id));
    roll.textContent = state.phase === "reroll" && legal.size
      ? (n ? "Roll " + n + " selected" : "Roll selected") + " (" + state.rolls_left + " left)"
      : "Roll selected";
    roll.dataset.action = String(id);
    $("stop").disabled = !legal.has(STOP);
    $("end-turn").disabled = !legal.has(END_TURN);
    const hint = $("hint");
    hint.classList.toggle("hidden", !(meta.hint && mySeat !== null));
    hint.disabled = !(legal.size > 0);
  }

  function statusText(state, legal) {
    if (view.over) return "Game over.";
    const current = state.current_player;
    if (!legal.size) {
      const seat = view.seats[current];
      if (seat.type === "bot" && view.bot_error) return view.bot_error.message + ".";
      if (seat.type === "bot") return seatName(current) + " (bot) is playing…";
      return "Waiting for " + seatName(current) + "…";
    }
    if (state.phase === "reroll") {
      return "Your turn: tap dice to reroll them, then Roll (" + state.rolls_left +
        " left), or Stop to keep these dice.";
    }
    if (state.phase === "circle") {
      return state.circles_this_turn
        ? "Circle another highlighted item, or End turn (" + state.circles_this_turn + "/3 circled)."
        : "Circle an item: tap a highlighted cell on your shelf.";
    }
    return "Nothing fits these dice: tap a row of your shelf to cross it out.";
  }

  function renderBoards(state, legal) {
    const box = $("boards");
    box.replaceChildren();
    const result = view.over ? view.result : null;
    state.boards.forEach((board, p) => {
      const mine = p === mySeat;
      const active = mine && legal.size > 0;
      const card = el("article", "board");
      card.dataset.seat = String(p);
      if (!view.over && state.current_player === p) card.classList.add("turn");
      const head = el("header");
      const seat = view.seats[p];
      head.append(
        el("span", "name", seat.name),
        el("span", "who", mine ? "(you)" : seat.type === "bot" ? "bot: " + seat.bot : "person"),
        el("span", "score", state.scores[p] + " pts"),
      );
      if (result && result.winners.includes(p)) {
        const badge = el("span", "badge c-trophy", " winner");
        badge.prepend(icon("trophy"));
        head.appendChild(badge);
      }
      card.appendChild(head);
      const grid = el("div", "grid");
      grid.appendChild(el("span"));
      for (let c = 0; c < 5; c++) {
        const h = el("span", "colhead", (c + 1) + "×");
        h.title = (c + 1) + " dice of the row's symbol";
        grid.appendChild(h);
      }
      // circle options of my shelf: cell index -> [ids]
      const options = new Map();
      if (active && state.phase === "circle") {
        for (const a of legal) {
          if (a >= CIRCLE_BASE && a < END_TURN) {
            const cell = (a - CIRCLE_BASE) >> 1;
            if (!options.has(cell)) options.set(cell, []);
            options.get(cell).push(a);
          }
        }
      }
      for (let r = 0; r < 5; r++) {
        const crossable = active && legal.has(CROSS_BASE + r);
        const rowHead = el("button", "rowhead c-" + SYMBOLS[r]);
        rowHead.type = "button";
        rowHead.appendChild(icon(r));
        rowHead.disabled = !crossable;
        rowHead.setAttribute("aria-label", crossable ? "Cross out the " + PLURALS[r] + " row" : PLURALS[r]);
        rowHead.title = crossable ? "Cross out the " + PLURALS[r] + " row" : PLURALS[r];
        rowHead.dataset.row = String(r);
        if (crossable) {
          rowHead.classList.add("crossable");
          rowHead.addEventListener("click", () => act(CROSS_BASE + r));
        }
        grid.appendChild(rowHead);
        for (let c = 0; c < 5; c++) {
          const status = board[r][c];
          const cell = el("button", "cell c-" + SYMBOLS[r]);
          cell.type = "button";
          cell.dataset.row = String(r);
          cell.dataset.col = String(c);
          cell.appendChild(icon(r));
          cell.appendChild(el("span", "pts", state.points[r][c]));
          const label = SYMBOLS[r] + " #" + (c + 1) + ", " + state.points[r][c] + " points";
          const ids = options.get(5 * r + c);
          if (status === 1) cell.classList.add("circled");
          if (status === 2) cell.classList.add("crossed");
          cell.setAttribute("aria-label", label + (status === 1 ? ", circled" : status === 2 ? ", crossed out" : ""));
          if (ids) {
            cell.classList.add("legal");
            cell.addEventListener("click", () => chooseCircle(r, c, ids));
          } else if (crossable && status === 0) {
            cell.classList.add("crossable");
            cell.addEventListener("click", () => act(CROSS_BASE + r));
          } else {
            cell.disabled = true;
          }
          grid.appendChild(cell);
        }
      }
      card.appendChild(grid);
      box.appendChild(card);
    });
  }

  function renderResult() {
    const panel = $("result");
    panel.classList.toggle("hidden", !view.over);
    $("play").classList.toggle("hidden", view.over);
    if (!view.over) return;
    const { scores, breakdown, winners } = view.result;
    const names = winners.map(seatName);
    $("winners").textContent = view.seats.length === 1
      ? names[0] + " scored " + scores[0] + " points."
      : winners.length === 1 ? names[0] + " wins!" : names.join(" and ") + " share the victory!";
    // one column per player, one line per row and column of the shelf: fits a phone screen
    const table = $("result-table");
    table.replaceChildren();
    const head = el("tr");
    head.appendChild(el("th", null, ""));
    view.seats.forEach((seat, p) => head.appendChild(el("th", winners.includes(p) ? "winner" : "", seat.name)));
    table.appendChild(head);
    const line = (label, values, className) => {
      const tr = el("tr", className || "");
      tr.appendChild(label);
      values.forEach((v, p) => tr.appendChild(el("td", winners.includes(p) ? "winner" : "", v)));
      table.appendChild(tr);
    };
    SYMBOLS.forEach((s, r) => {
      const th = el("th", "c-" + s);
      th.appendChild(icon(r));
      th.appendChild(el("span", null, " " + PLURALS[r]));
      line(th, breakdown.map((b) => b.rows[r]));
    });
    for (let c = 0; c < 5; c++) line(el("th", null, "column " + (c + 1)), breakdown.map((b) => b.cols[c]));
    line(el("th", null, "Total"), scores, "total");
    $("replay").href = "/api/games/" + encodeURIComponent(gameId) + "/replay";
  }

  function renderInvites() {
    const links = remembered.links || {};
    const others = Object.keys(links).filter((s) => Number(s) !== mySeat);
    $("invite").classList.toggle("hidden", others.length === 0 || (view && view.over));
    const box = $("invite-links");
    box.replaceChildren();
    for (const s of others) {
      const row = el("div", "invite-row");
      const input = el("input");
      input.readOnly = true;
      input.value = window.location.origin + links[s];
      input.setAttribute("aria-label", "Invite link for seat " + (Number(s) + 1));
      input.dataset.seat = s;
      const copy = el("button", null, "Copy");
      copy.type = "button";
      copy.addEventListener("click", async () => {
        input.select();
        try { await navigator.clipboard.writeText(input.value); copy.textContent = "Copied"; } catch (_) {
          copy.textContent = "Select + copy";
        }
      });
      row.append(el("span", null, seatName(Number(s)) + ":"), input, copy);
      box.appendChild(row);
    }
  }

  function render(state, interactive) {
    const legal = legalSet(interactive);
    if (!(state.phase === "reroll" && legal.size)) rerollCounts = [0, 0, 0, 0, 0, 0];
    const status = $("status");
    status.textContent = interactive ? statusText(state, legal) : status.textContent;
    status.classList.toggle("mine", legal.size > 0);
    renderDice(state, legal);
    renderControls(state, legal);
    renderBoards(state, legal);
    if (interactive) {
      renderResult();
      renderInvites();
    }
  }

  function logMove(move) {
    const li = el("li", move.seat === mySeat ? "mine" : "", seatName(move.seat) + ": " + move.name);
    li.dataset.index = String(move.index);
    const list = $("log").querySelector("ol");
    list.appendChild(li);
    list.scrollTop = list.scrollHeight;
  }

  // ------------------------------------------------------------------ talking to the server
  /** Show the moves of ``next`` not shown yet (others' moves one by one), then its position. */
  async function show(next, animate) {
    seats = next.seats;
    const fresh = next.moves.filter((m) => m.index >= shown);
    for (const move of fresh) {
      logMove(move);
      shown = move.index + 1;
      if (animate && move.seat !== mySeat && DELAY_MS > 0) {
        $("status").textContent = seatName(move.seat) + ": " + move.name;
        render(move.state, false);
        await sleep(DELAY_MS);
      }
    }
    view = next;
    shown = Math.max(shown, next.num_moves);
    render(view.state, true);
  }

  async function act(action) {
    if (busy || !myTurn()) return;
    setBusy(true);
    $("error").textContent = "";
    $("hints").classList.add("hidden");
    rerollCounts = [0, 0, 0, 0, 0, 0];
    try {
      const next = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/actions",
        { seat: mySeat, token, action, expect: shown, since: shown });
      await show(next, true);
    } catch (err) {
      $("error").textContent = err.message;
      await refresh(false);
    } finally {
      setBusy(false);
    }
  }

  function chooseCircle(r, c, ids) {
    if (ids.length === 1) { act(ids[0]); return; }
    const dialog = $("joker-dialog");
    const plural = c + 1 === 1 ? SYMBOLS[r] : PLURALS[r];
    $("joker-question").textContent = "Circle " + SYMBOLS[r] + " #" + (c + 1) + " with:";
    $("joker-no").textContent = (c + 1) + " " + plural + " (keep the joker)";
    $("joker-yes").textContent = c + " " + (c === 1 ? SYMBOLS[r] : PLURALS[r]) + " + the joker";
    // The move starts in the click itself (the dialog's close event comes a task later), so the
    // page is busy from the moment of the choice; Cancel and Escape just close the dialog.
    const pick = (joker) => act(ids.find((a) => ((a - CIRCLE_BASE) & 1) === joker));
    $("joker-no").onclick = () => pick(0);
    $("joker-yes").onclick = () => pick(1);
    dialog.showModal();
  }

  async function showHints() {
    if (busy || !myTurn()) return;
    const box = $("hints");
    const list = box.querySelector("ol");
    list.replaceChildren();
    try {
      const answer = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/hint",
        { seat: mySeat, token, k: 3 });
      for (const h of answer.hints) {
        const li = el("li", null, h.name + (h.reason ? " — " + h.reason : ""));
        if (h.value !== null) li.title = "expected value " + h.value.toFixed(2);
        const play = el("button", "play-hint", "Play this");
        play.type = "button";
        play.addEventListener("click", () => act(h.action));
        li.append(" ", play);
        list.appendChild(li);
      }
      box.classList.remove("hidden");
    } catch (err) {
      $("error").textContent = err.message;
    }
  }

  let offline = false; // the last refresh could not reach the server

  async function refresh(animate) {
    let next;
    try {
      next = await api("GET", "/api/games/" + encodeURIComponent(gameId) + "?since=" + shown);
    } catch (err) {
      offline = !(err instanceof Shelfie.ApiError);
      $("error").textContent = offline ? "The server cannot be reached; retrying…" : err.message;
      return;
    }
    if (offline) {
      offline = false;
      $("error").textContent = "";
    }
    if (view === null || next.num_moves !== shown || next.over !== view.over) await show(next, animate);
  }

  async function poll() {
    if (!busy && view !== null && !view.over && !myTurn()) {
      setBusy(true);
      try { await refresh(true); } finally { setBusy(false); }
    }
    setTimeout(poll, POLL_MS);
  }

  async function init() {
    setBusy(true);
    $("roll").addEventListener("click", () => act(Number($("roll").dataset.action)));
    $("stop").addEventListener("click", () => act(STOP));
    $("end-turn").addEventListener("click", () => act(END_TURN));
    $("hint").addEventListener("click", showHints);
    try {
      meta = await api("GET", "/api/meta");
    } catch (_) { /* hints stay off */ }
    try {
      const first = await api("GET", "/api/games/" + encodeURIComponent(gameId) + "?since=0");
      await show(first, false);
      document.title = "Shelfie dice — " + first.seats.map((s) => s.name).join(" vs ");
    } catch (err) {
      $("status").textContent = err.status === 404 ? "There is no such game." : "Error: " + err.message;
    }
    setBusy(false);
    setTimeout(poll, POLL_MS);
  }

  init();
})();
