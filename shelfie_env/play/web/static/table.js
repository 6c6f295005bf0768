/* The table page: shows the shelves and dice, sends the player's clicks as action ids,
   shows the other seats' moves one by one and the final scores.
   The server is authoritative: only ids the server listed as legal are ever clickable, and
   every total on the page (line points, what a line is worth, the last round, what a move
   crossed out) comes from the server's view; the page only puts it into words. */
"use strict";

(() => {
  const { SYMBOLS, PLURALS, FACES, icon, el, api, rerollId, sleep, fixed, memory, personKey, ratingText,
    durationText } = Shelfie;
  const STOP = 0, CIRCLE_BASE = 64, END_TURN = 114, CROSS_BASE = 115;
  /** A timing setting: localStorage "shelfie:<key>" (ms) when set, else the default. */
  function setting(key, fallback) {
    const raw = localStorage.getItem("shelfie:" + key);
    const value = raw === null ? NaN : Number(raw);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  }
  const POLL_MS = Math.max(100, setting("poll", 1500)); // how often to look for others' moves
  const DELAY_MS = setting("delay", 900);                // pause after each of the others' moves
  const TURN_PAUSE_MS = setting("turnpause", Math.min(DELAY_MS, 700)); // and after each of their turns

  const gameId = decodeURIComponent(window.location.pathname.split("/").pop());
  const remembered = memory.get(gameId) || {};
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  let mySeat = fragment.has("seat") ? Number(fragment.get("seat")) : (remembered.seat ?? null);
  let token = fragment.get("token") || remembered.token || null;
  if (mySeat !== null && !Number.isInteger(mySeat)) mySeat = null;
  if (!token) mySeat = null; // without its token a seat cannot be played: this page watches
  if (token && mySeat !== null) memory.set(gameId, { ...remembered, seat: mySeat, token });

  let meta = { hint: false };
  let view = null;        // last view from the server
  let seats = [];         // seats of the game (names, kinds)
  let shown = 0;          // moves already shown in the log
  let busy = false;       // a request or an animation is running
  // Dice tapped for the reroll, by position (those lift); the move counts them per face, so
  // tapping an unlifted die lifts one more of its face and tapping a lifted one lowers one.
  let picked = new Set();
  let pickedDice = ""; // the dice the picks were made on

  function pickedCounts(dice) {
    const counts = [0, 0, 0, 0, 0, 0];
    picked.forEach((i) => { counts[dice[i]] += 1; });
    return counts;
  }

  function clearPicks() {
    picked = new Set();
  }
  let lines = [];         // per seat: the server's row/column summaries of the position shown
  let lastRound = null;   // the server's last-round summary of the position shown
  // the last move shown: cells changed in the latest turn that changed a shelf, dice of the latest roll
  const marks = { cells: new Map(), dice: new Set(), turn: -1, fresh: false };
  let turnNo = 0;         // turns seen in the log so far (a move with new_turn starts the next)
  let notices = [];       // lockout sentences not yet seen by this seat
  let skipping = false;   // "Show all" pressed while others' moves are shown one by one
  let rematch = null;     // the rematch of this finished game once one is open: {game_id, seat_map}

  const $ = (id) => document.getElementById(id);

  /** Whether a bot seat is on turn: its moves are on their way (the server plays them in the background). */
  function botDue() {
    return view !== null && !view.over && view.seats[view.state.current_player].type === "bot" && !view.bot_error;
  }

  /** ``body[data-ready]`` is "1" when the page is settled: no request or replay running, no bot move due. */
  function updateReady() {
    document.body.dataset.ready = busy || botDue() ? "0" : "1";
  }

  function setBusy(value) {
    busy = value;
    updateReady();
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
    state.dice.forEach((face, i) => {
      const die = el("button", "die f-" + FACES[face]);
      die.type = "button";
      die.dataset.pos = String(i);
      die.dataset.face = FACES[face];
      die.appendChild(icon(face));
      const used = state.spent[i] && state.phase !== "reroll";
      if (used) die.classList.add("spent");
      const lifted = canPick && picked.has(i);
      if (lifted) die.classList.add("selected");
      const rolled = marks.dice.has(i);
      if (rolled) die.classList.add("rolled");
      if (rolled && marks.fresh) die.classList.add("roll-in");
      die.setAttribute("aria-label", FACES[face] + (face === 5 ? " (wild)" : "") + (used ? ", used" : "") +
        (rolled ? ", just rolled" : ""));
      die.title = FACES[face] === "joker" ? "joker (wild)" : FACES[face];
      die.disabled = !canPick;
      if (canPick) {
        die.setAttribute("aria-pressed", lifted ? "true" : "false");
        die.addEventListener("click", () => {
          if (picked.has(i)) picked.delete(i);
          else picked.add(i);
          renderControls(state, legal);
          renderDice(state, legal);
        });
      }
      box.appendChild(die);
    });
  }

  function renderControls(state, legal) {
    const id = state.phase === "reroll" ? rerollId(state.dice, pickedCounts(state.dice)) : 0;
    const roll = $("roll");
    const n = state.phase === "reroll" ? picked.size : 0;
    roll.disabled = !(id && legal.has(id));
    roll.textContent = state.phase === "reroll" && legal.size
      ? (n ? "Roll " + n + " selected" : "Roll selected") + " (" + state.rolls_left + " left)"
      : "Roll selected";
    roll.dataset.action = String(id);
    $("stop").disabled = !legal.has(STOP);
    $("end-turn").disabled = !legal.has(END_TURN);
    $("resign").classList.toggle("hidden", mySeat === null || view === null || view.over);
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

  /** A seat in a sentence: "you" for this page's seat, else the seat's name. */
  function who(seat, capital) {
    if (seat === mySeat) return capital ? "You" : "you";
    return seatName(seat);
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function joinAnd(items) {
    return items.length <= 1 ? items.join("") : items.slice(0, -1).join(", ") + " and " + items[items.length - 1];
  }

  function cellName(r, c) { return SYMBOLS[r] + " #" + (c + 1); }

  /** One row's or column's summary in a sentence (screen readers, tooltips). */
  function lineSentence(line) {
    const parts = [line.name + ": " + line.circled + " of " + line.size + " circled"];
    if (line.crossed) parts[0] += ", " + line.crossed + " crossed out";
    parts.push(line.circled >= 3 ? "scores " + plural(line.points, "point") + " now"
      : "scores nothing yet (a line scores from 3 circles)");
    if (line.status === "complete") parts.push("complete");
    else if (line.status === "locked") parts.push("locked: " + who(line.locked_by) + " completed it first");
    else if (line.status === "full") parts.push("no free cell left");
    else if (line.free) parts.push("up to " + plural(line.max, "point") + " with every free cell circled");
    if (line.next && line.next.goal === "score") {
      parts.push("one circle from scoring (up to +" + line.next.gain + ")");
    } else if (line.next) {
      parts.push("one circle from complete (+" + line.next.gain +
        (view.seats.length > 1 ? ", crosses it out for the others" : "") + ")");
    }
    return parts.join("; ");
  }

  /** The small box beside a row (or under a column): progress, points, what is next. */
  function lineChip(line) {
    const chip = el("div", "ln " + line.status);
    chip.dataset.kind = line.kind;
    chip.dataset.index = String(line.index);
    chip.dataset.status = line.status;
    const top = el("span", "ln-top");
    top.append(el("span", "ln-progress", line.circled + "/" + line.size), line.kind === "row" ? " " : "",
      el("span", "ln-points" + (line.points ? "" : " zero"), "+" + line.points));
    chip.appendChild(top);
    let note = "";
    if (line.status === "complete") note = line.kind === "row" ? "complete" : "done";
    else if (line.status === "locked") note = "locked";
    else if (line.status === "full") note = "full";
    else if (line.next) note = line.next.goal === "score" ? "1 to score" : "1 to finish";
    if (line.next && line.status === "open") chip.classList.add("near");
    if (note) chip.appendChild(el("span", "ln-note", note));
    const sentence = lineSentence(line);
    chip.title = sentence;
    chip.setAttribute("aria-label", sentence);
    chip.setAttribute("role", "note");
    return chip;
  }

  function renderBoards(state, legal) {
    const box = $("boards");
    box.replaceChildren();
    const result = view.over ? view.result : null;
    state.boards.forEach((board, p) => {
      const mine = p === mySeat;
      const active = mine && legal.size > 0;
      const card = el("article", "board" + (mine ? " mine" : ""));
      card.dataset.seat = String(p);
      const onTurn = state.phase !== "over" && state.current_player === p;
      if (onTurn) card.classList.add("turn");
      const head = el("header");
      const seat = view.seats[p];
      head.append(
        el("span", "name", seat.name),
        el("span", "who", mine ? "(you)" : seat.type === "bot" ? "bot: " + seat.bot : "person"),
        el("span", "score", state.scores[p] + " pts"),
      );
      if (onTurn) head.insertBefore(el("span", "on-turn", "on turn"), head.lastChild);
      if (result && result.winners.includes(p)) {
        const badge = el("span", "badge c-trophy", " winner");
        badge.prepend(icon("trophy"));
        head.appendChild(badge);
      }
      card.appendChild(head);
      const summary = lines[p] || null;
      const locked = new Set(); // cells of this shelf in a line a rival completed
      if (summary) {
        for (const line of summary.rows.concat(summary.cols)) {
          if (line.status !== "locked") continue;
          for (let k = 0; k < 5; k++) locked.add(line.kind === "row" ? line.index * 5 + k : k * 5 + line.index);
        }
      }
      const grid = el("div", "grid");
      grid.appendChild(el("span"));
      for (let c = 0; c < 5; c++) {
        const h = el("span", "colhead", (c + 1) + "×");
        h.title = (c + 1) + " dice of the row's symbol";
        grid.appendChild(h);
      }
      grid.appendChild(el("span", "colhead", "row"));
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
        rowHead.append(icon(r), el("span", "rowname", SYMBOLS[r]));
        rowHead.disabled = !crossable;
        const rowLabel = SYMBOLS[r] + " row" + (crossable ? ": cross out " + PLURALS[r] : "");
        rowHead.setAttribute("aria-label", rowLabel);
        rowHead.title = rowLabel;
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
          let label = SYMBOLS[r] + " #" + (c + 1) + ", " + state.points[r][c] + " points";
          const ids = options.get(5 * r + c);
          if (status === 1) cell.classList.add("circled");
          if (status === 2) cell.classList.add("crossed");
          if (status === 2 && locked.has(5 * r + c)) cell.classList.add("locked");
          label += status === 1 ? ", circled" : status === 2 ? (locked.has(5 * r + c) ? ", locked out" : ", crossed out") : "";
          const mark = marks.cells.get(p + ":" + r + ":" + c);
          if (mark) {
            cell.classList.add("last");
            if (marks.fresh) cell.classList.add(mark === 1 ? "circle-in" : "cross-in");
            label += ", last move";
          }
          cell.setAttribute("aria-label", label);
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
        grid.appendChild(summary ? lineChip(summary.rows[r]) : el("span"));
      }
      grid.appendChild(el("span", "colhead foot", "col"));
      for (let c = 0; c < 5; c++) grid.appendChild(summary ? lineChip(summary.cols[c]) : el("span"));
      grid.appendChild(el("span"));
      card.appendChild(grid);
      box.appendChild(card);
    });
  }

  function renderLastRound(state) {
    const banner = $("last-round");
    const lr = view.over ? null : lastRound;
    banner.classList.toggle("hidden", !lr);
    if (!lr) { banner.textContent = ""; return; }
    const by = lr.triggered_by.map((q, i) => who(q, i === 0));
    const has = by.length > 1 || lr.triggered_by[0] === mySeat ? "have" : "has";
    let text = "Last round: " + joinAnd(by) + " " + has + " two rows with no free cell. ";
    if (lr.to_play.length <= 1 && state.current_player === lr.last_seat) {
      text += "This turn is the last of the game.";
    } else {
      text += "The game ends after " + (lr.last_seat === mySeat ? "your" : seatName(lr.last_seat) + "'s") +
        " turn. Still to play: " + joinAnd(lr.to_play.map((q) => who(q))) + ".";
    }
    banner.textContent = text;
  }

  function renderNotices() {
    const box = $("notices");
    const list = box.querySelector("ul");
    const shownText = Array.from(list.children).map((li) => li.textContent).join("\n");
    if (shownText === notices.map((n) => n.text).join("\n")) return; // unchanged: do not re-announce
    list.replaceChildren(...notices.map((n) => el("li", n.mine ? "mine" : "", n.text)));
    box.classList.toggle("hidden", notices.length === 0);
  }

  function renderResult() {
    const panel = $("result");
    panel.classList.toggle("hidden", !view.over);
    $("play").classList.toggle("hidden", view.over);
    if (!view.over) return;
    const { scores, breakdown, winners } = view.result;
    const names = winners.map(seatName);
    const resigned = view.resigned === undefined ? null : view.resigned;
    const verdict = winners.length === 1 ? names[0] + " wins!" : names.join(" and ") + " share the victory!";
    if (resigned !== null && view.left) {
      $("winners").textContent = seatName(resigned) + " stopped moving: the game counts as their resignation. " +
        (view.seats.length === 1 ? "" : verdict);
    } else if (resigned !== null) {
      $("winners").textContent = view.seats.length === 1
        ? seatName(resigned) + " resigned with " + scores[0] + " points."
        : seatName(resigned) + " resigned. " + verdict;
    } else {
      $("winners").textContent = view.seats.length === 1 ? names[0] + " scored " + scores[0] + " points." : verdict;
    }
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
    $("review").dataset.players = String(view.seats.length); // a solo game's exact review opens by itself
    renderRatings();
  }

  /** The ratings under the winners: this seat's "Your rating 1432 ± 120 (+18)" or why the game is
      unrated for it ("Unrated: hints were used"), then the other people's new ratings. */
  function renderRatings() {
    const box = $("ratings");
    const outcome = view.ratings || [];
    const lines = [];
    const mine = outcome.find((o) => o.seat === mySeat);
    if (mine && mine.rated) {
      lines.push(["mine", "Your rating " + ratingText(mine.rating, mine.rd, mine.change) + " at " + mine.players +
        " players, after " + mine.games + " rated game" + (mine.games === 1 ? "" : "s") + "."]);
    } else if (mine && view.seats[mySeat].type === "human") {
      lines.push(["mine unrated", "Unrated: " + mine.reason + "."]);
    }
    for (const o of outcome) {
      if (o.seat !== mySeat && o.rated) {
        lines.push(["other", seatName(o.seat) + "'s rating " + ratingText(o.rating, o.rd, o.change) + "."]);
      }
    }
    box.replaceChildren(...lines.map(([cls, text]) => el("p", "rating-line " + cls, text)));
    if (mine && view.seats[mySeat].type === "human") {
      const link = el("a", null, "Your games and rating");
      link.href = "/me";
      box.appendChild(el("p")).appendChild(link);
    }
    box.classList.toggle("hidden", box.children.length === 0);
  }

  /** The body of a request for this page's seat: its seat and token, and this browser's person key
      (a seat the person joined answers to the key alone). */
  function seatBody(extra) {
    const key = personKey();
    return { seat: mySeat, token, ...(key ? { person: key } : {}), ...extra };
  }

  /** Under the status of a game that can move a rating: by when the person on turn must move. */
  function renderInactivity() {
    const box = $("inactivity");
    const info = view && !view.over ? view.inactivity : null;
    box.classList.toggle("hidden", !info);
    if (!info) return;
    const limit = durationText(info.limit_s);
    const early = " Against another person, a game resigned or left before the player's " + info.abort_decisions +
      "rd decision is aborted, unrated for both.";
    if (info.seat === null) {
      box.textContent = "Rated game: a player who makes no move for " + limit + " loses it by resignation." + early;
      return;
    }
    const by = new Date(info.move_by * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
    box.textContent = (info.seat === mySeat
      ? "Rated game: move by " + by + " (" + limit + " after the last move), or the game counts as your resignation."
      : "Rated game: if " + seatName(info.seat) + " makes no move by " + by + " (" + limit +
        " after the last move), the game counts as their resignation.") + early;
  }

  /** Tell the server which person plays this seat (this browser's key), so the game is rated as
      theirs and the seat answers to this browser alone; a seat that is another person's, or a game
      already over, stays as it is. */
  async function joinSeat() {
    const key = personKey();
    if (mySeat === null || !token || !key || view === null || view.over) return;
    try {
      await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/join", { seat: mySeat, token, person: key });
    } catch (_) { /* not rated as this browser's person: the game goes on the same */ }
  }

  // ------------------------------------------------------------------ rematch
  /** Whether this page may open the rematch: it holds a seat, or the table has no person at all. */
  function canAskRematch() {
    return mySeat !== null || view.seats.every((s) => s.type === "bot");
  }

  /** Where this page goes for the rematch: its seat there with the same token, else the table to watch. */
  function rematchLink(info) {
    const base = "/g/" + encodeURIComponent(info.game_id);
    return mySeat === null ? base : base + "#seat=" + info.seat_map[mySeat] + "&token=" + encodeURIComponent(token);
  }

  /** The rematch in words: who plays it and who starts (seat 2 moves to seat 1, and so on). */
  function rematchWords() {
    if (view.seats.length === 1) return "new dice.";
    const kinds = new Set(view.seats.map((s) => s.type));
    const who = kinds.size === 2 ? "the same players and bots" : kinds.has("bot") ? "the same bots" : "the same players";
    return who + ", new dice; " + (mySeat === 1 ? "you start" : seatName(1) + " starts") + ".";
  }

  const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  function renderAgain() {
    const over = view !== null && view.over;
    const ask = over && !rematch && canAskRematch();
    const top = $("rematch-top");
    top.classList.toggle("hidden", !over || !(rematch || ask));
    top.textContent = rematch ? (mySeat === null ? "Watch the rematch" : "Join the rematch") : "Rematch";
    $("play-again").classList.toggle("hidden", !ask);
    const join = $("join-rematch");
    join.classList.toggle("hidden", !(over && rematch));
    if (!over) return;
    const same = rematchWords();
    if (rematch) {
      join.href = rematchLink(rematch);
      join.textContent = mySeat === null ? "Watch the rematch" : "Join the rematch";
      $("again-note").textContent = "A rematch is open: " + same;
    } else {
      $("again-note").textContent = ask ? capitalized(same) : "";
    }
  }

  /** Remember the rematch on this device: this seat's token and, for whoever invited the others,
      their links there (the same tokens, one seat on). */
  function rememberRematch(info) {
    const links = {};
    for (const [s, link] of Object.entries(remembered.links || {})) {
      const seatToken = new URLSearchParams(String(link).split("#")[1] || "").get("token");
      const seat = info.seat_map[Number(s)];
      if (seatToken && seat !== undefined) {
        links[String(seat)] = "/g/" + info.game_id + "#seat=" + seat + "&token=" + encodeURIComponent(seatToken);
      }
    }
    memory.set(info.game_id, { ...(memory.get(info.game_id) || {}), links, creator: Boolean(remembered.creator) });
    const n = view.seats.length;
    const names = view.seats.map((_, s) => seatName((s + 1) % n));
    memory.addRecent({ id: info.game_id, link: rematchLink(info), label: names.join(" vs "), created: Date.now() });
  }

  function goToRematch(info) {
    rememberRematch(info);
    window.location.assign(rematchLink(info));
  }

  /** Open the rematch, or find the open one and take this seat there (a watcher just goes to it). */
  async function askRematch() {
    if (rematch && mySeat === null) { goToRematch(rematch); return; }
    if (busy || !canAskRematch()) return;
    setBusy(true);
    $("rematch-error").textContent = "";
    try {
      const body = mySeat === null ? {} : seatBody({});
      const answer = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/rematch", body);
      rematch = { game_id: answer.game_id, seat_map: answer.seat_map };
      goToRematch(rematch);
    } catch (err) {
      $("rematch-error").textContent = err.message;
      setBusy(false);
    }
  }

  /** A finished game's page looks now and then whether another player opened the rematch. */
  async function lookForRematch() {
    try {
      const answer = await api("GET", "/api/games/" + encodeURIComponent(gameId) + "/rematch");
      if (answer.rematch) {
        rematch = answer.rematch;
        renderAgain();
      }
    } catch (_) { /* the next look tries again */ }
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
    const dice = state.dice.join(",");
    if (!(state.phase === "reroll" && legal.size) || dice !== pickedDice) clearPicks();
    pickedDice = dice;
    const status = $("status");
    status.textContent = interactive ? statusText(state, legal) : status.textContent;
    status.classList.toggle("mine", legal.size > 0);
    renderLastRound(state);
    renderNotices();
    renderDice(state, legal);
    renderControls(state, legal);
    renderBoards(state, legal);
    marks.fresh = false; // the roll and circle animations play once, on the render after the move
    if (interactive) {
      renderResult();
      renderAgain();
      renderInvites();
    }
  }

  const faceList = (faces) => faces.map((f) => FACES[f]).join(", ");

  /** The move in words, as the log and the status line say it. */
  function moveText(move) {
    const ev = move.events || {};
    let text = move.name;
    if (ev.rolled && ev.rolled.length) text += " → " + faceList(ev.rolled);
    return text;
  }

  /** The lockout sentences of a move, the viewer's own loss first:
      "Ana completed column 3: your cells trophy #3 and cat #3 are crossed out (Cy loses 5 cells, Dan 3)." */
  function lockoutNotices(move) {
    const out = [];
    for (const done of (move.events && move.events.completed) || []) {
      if (!done.crossed.length) continue;
      const line = done.kind === "row" ? "the " + PLURALS[done.index] + " row" : "column " + (done.index + 1);
      const cells = (x) => joinAnd(x.cells.map(([r, c]) => cellName(r, c)));
      const mine = done.crossed.find((x) => x.seat === mySeat);
      const others = done.crossed.filter((x) => x.seat !== mySeat);
      let text = who(done.by, true) + " completed " + line + ": ";
      if (mine) {
        const one = mine.cells.length === 1;
        text += "your cell" + (one ? " " : "s ") + cells(mine) + (one ? " is" : " are") + " crossed out";
        if (others.length) {
          text += " (" + others.map((x, i) => seatName(x.seat) + (i === 0 ? " loses " + plural(x.cells.length, "cell")
            : " " + x.cells.length)).join(", ") + ")";
        }
        text += ".";
      } else {
        text += "crossed out " + others.map((x) => seatName(x.seat) + "'s " + cells(x)).join("; ") + ".";
      }
      out.push({ text, mine: Boolean(mine) });
    }
    return out;
  }

  /** Take in one move of the log: its line, the marks of the last move, lines and notices. */
  function takeMove(move) {
    const ev = move.events || {};
    const li = el("li", "move" + (move.seat === mySeat ? " mine" : ""));
    li.dataset.index = String(move.index);
    li.dataset.name = move.name;
    li.appendChild(el("span", "who", seatName(move.seat) + ": "));
    if (ev.opening) li.appendChild(el("span", "opening", "rolled " + faceList(ev.opening) + "; "));
    li.appendChild(el("span", "what", move.name));
    if (ev.rolled && ev.rolled.length) li.appendChild(el("span", "got", " → " + faceList(ev.rolled)));
    const done = (ev.completed || []).map((d) => d.kind === "row" ? "the " + PLURALS[d.index] + " row"
      : "column " + (d.index + 1));
    if (done.length) li.appendChild(el("span", "effect", " (completes " + joinAnd(done) + ")"));
    if (ev.end_triggered) li.appendChild(el("span", "effect", " — last round"));
    const list = $("log").querySelector("ol");
    list.appendChild(li);
    list.scrollTop = list.scrollHeight;

    if ((ev.circled && ev.circled.length) || (ev.crossed && ev.crossed.length)) {
      if (marks.turn !== turnNo) { marks.cells.clear(); marks.turn = turnNo; }
      for (const [p, r, c] of ev.circled) marks.cells.set(p + ":" + r + ":" + c, 1);
      for (const [p, r, c] of ev.crossed) marks.cells.set(p + ":" + r + ":" + c, 2);
    }
    if (ev.rolled_at) marks.dice = new Set(ev.rolled_at);
    if (ev.new_turn) {
      marks.dice = new Set([0, 1, 2, 3, 4, 5]);
      turnNo += 1;
    }
    marks.fresh = true;
    for (const summary of move.lines || []) lines[summary.seat] = summary;
    if ("last_round" in move) lastRound = move.last_round;
    if (move.seat === mySeat && mySeat !== null) notices = []; // seen: this seat has moved since
    notices = notices.concat(lockoutNotices(move)).slice(-4);
  }

  // ------------------------------------------------------------------ talking to the server
  /** Show the moves of ``next`` not shown yet (others' moves one by one), then its position. */
  async function show(next, animate) {
    seats = next.seats;
    const fresh = next.moves.filter((m) => m.index >= shown);
    const others = fresh.filter((m) => m.seat !== mySeat).length;
    $("skip").classList.toggle("hidden", !(animate && others > 1 && DELAY_MS > 0));
    for (const move of fresh) {
      takeMove(move);
      shown = move.index + 1;
      if (animate && move.seat !== mySeat && DELAY_MS > 0 && !skipping) {
        $("status").textContent = seatName(move.seat) + ": " + moveText(move);
        render(move.state, false);
        await sleep(move.events && move.events.new_turn ? DELAY_MS + TURN_PAUSE_MS : DELAY_MS);
      }
    }
    skipping = false;
    $("skip").classList.add("hidden");
    view = next;
    shown = Math.max(shown, next.num_moves);
    if (next.lines) lines = next.lines;
    lastRound = next.last_round || null;
    if (next.rematch) rematch = next.rematch;
    render(view.state, true);
    renderInactivity();
    updateReady();
  }

  async function act(action) {
    if (busy || !myTurn()) return;
    setBusy(true);
    $("error").textContent = "";
    $("hints").classList.add("hidden");
    clearPicks();
    try {
      const next = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/actions",
        seatBody({ action, expect: shown, since: shown }));
      await show(next, true);
    } catch (err) {
      $("error").textContent = err.message;
      await refresh(false);
    } finally {
      setBusy(false);
    }
  }

  function askResign() {
    if (busy || view === null || view.over || mySeat === null) return;
    $("resign-question").textContent = view.seats.length === 1
      ? "End this game now? It keeps the score you have."
      : "Resign? The game ends for everyone: you finish last, the others are ranked by their scores.";
    $("resign-yes").onclick = () => resignGame();  // starts in the click, as the joker dialog's moves
    $("resign-dialog").showModal();
  }

  async function resignGame() {
    if (busy || view === null || view.over || mySeat === null) return;
    setBusy(true);
    $("error").textContent = "";
    $("hints").classList.add("hidden");
    clearPicks();
    try {
      const next = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/resign",
        seatBody({ since: shown }));
      await show(next, false);
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

  /** A planner hint split into its reason and its estimate: ``kind`` "points" (the final score
      expected), "win" (% chance to win) or "rank" (% of the other players finished ahead of).
      The planner ends each reason with its measure: "(EV 171.2)" alone, "(win chance ~47.3%)"
      against one rival, "(rank edge +0.21)" against several. */
  function plainHint(h) {
    let reason = h.reason || "";
    let kind = null;
    let figure = null;
    const m = reason.match(/\s*\((?:EV (-?[\d.]+)|win chance ~([\d.]+)%|rank edge ([+-]?[\d.]+))\)\s*$/);
    if (m) {
      reason = reason.slice(0, m.index);
      if (m[1] !== undefined) {
        kind = "points";
        figure = Number(m[1]);
      } else if (m[2] !== undefined) {
        kind = "win";
        figure = Number(m[2]);
      } else {
        kind = "rank";
        figure = ((1 + Number(m[3])) / 2) * 100;
      }
    }
    reason = reason.replace(/\((\d+)% next roll\)/g, "($1% chance on the next roll)");
    return { kind, figure, reason };
  }

  /** The fewest decimals (0 to 2) that print the different ``figures`` differently, so hints
      shown together can be told apart. */
  function separatingDecimals(figures) {
    const distinct = new Set(figures.map((x) => x.toFixed(2))).size;
    for (let d = 0; d < 2; d++) {
      if (new Set(figures.map((x) => fixed(x, d))).size === distinct) return d;
    }
    return 2;
  }

  /** A solo hint is exact (``answer.exact``): its value, the move's reroll in words, no estimate. */
  function exactHint(h) {
    return { kind: "exact", figure: h.value, reason: (h.reason || "").replace(/\s*\(exact: [^)]*\)\s*$/, "") };
  }

  function estimateText(kind, figure, decimals) {
    const x = fixed(figure, decimals);
    if (kind === "exact") return "worth " + x + " points expected at the end";
    if (kind === "points") return "about " + x + " points expected at the end";
    if (kind === "win") return "about " + x + "% chance to win";
    return "expected to finish ahead of about " + x + "% of the other players";
  }

  const HINT_EXPLAIN = {
    win: "The chance to win is the planner's estimate for this move followed by good play: " +
      "it weighs the dice odds and both shelves. It is a guide, not a promise.",
    rank: "With several rivals the planner estimates where you would finish: " +
      "the share of the other players you would end ahead of, on average, after this move.",
    points: "Playing alone, the planner estimates the final score you would reach on average after this move.",
    exact: "Playing alone, the values are exact: the solo game is solved, so each is the final score you " +
      "can expect after the move if you play perfectly from then on.",
  };

  async function showHints() {
    if (busy || !myTurn()) return;
    const box = $("hints");
    const list = box.querySelector("ol");
    list.replaceChildren();
    try {
      const answer = await api("POST", "/api/games/" + encodeURIComponent(gameId) + "/hint",
        seatBody({ k: 3 }));
      const kinds = new Set();
      const plain = answer.hints.map(answer.exact ? exactHint : plainHint);
      const figures = plain.filter((w) => w.kind).map((w) => w.figure);
      const decimals = answer.exact ? Math.max(2, separatingDecimals(figures)) : separatingDecimals(figures);
      answer.hints.forEach((h, i) => {
        const words = plain[i];
        if (words.kind) kinds.add(words.kind);
        const li = el("li");
        li.appendChild(el("strong", "hint-move", h.name));
        if (words.kind) {
          li.appendChild(el("span", "hint-estimate", " — " + estimateText(words.kind, words.figure, decimals)));
        }
        if (answer.exact) {
          li.appendChild(el("span", "hint-loss", h.loss > 0 ? " (" + fixed(h.loss, decimals) + " less than the best)"
            : " (the best)"));
          if (words.reason) li.appendChild(el("span", "hint-reason", ": " + words.reason + "."));
        } else if (words.reason) li.appendChild(el("span", "hint-reason", ". Why: " + words.reason + "."));
        if (h.value !== null) li.title = (answer.exact ? "exact value " : "planner value ") + fixed(h.value, 4);
        const play = el("button", "play-hint", "Play this");
        play.type = "button";
        play.addEventListener("click", () => act(h.action));
        li.append(" ", play);
        list.appendChild(li);
      });
      $("hint-explain").textContent = Array.from(kinds).map((k) => HINT_EXPLAIN[k]).join(" ");
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
    } else if (!busy && view !== null && view.over && !rematch && !document.hidden) {
      await lookForRematch();
    }
    setTimeout(poll, view !== null && view.over ? 2 * POLL_MS : POLL_MS);
  }

  async function init() {
    setBusy(true);
    $("roll").addEventListener("click", () => act(Number($("roll").dataset.action)));
    $("stop").addEventListener("click", () => act(STOP));
    $("end-turn").addEventListener("click", () => act(END_TURN));
    $("hint").addEventListener("click", showHints);
    $("resign").addEventListener("click", askResign);
    $("skip").addEventListener("click", () => { skipping = true; });
    $("play-again").addEventListener("click", askRematch);
    $("rematch-top").addEventListener("click", askRematch);
    $("join-rematch").addEventListener("click", (event) => {
      event.preventDefault();
      askRematch();  // a player takes their seat in the rematch; a watcher goes to watch it
    });
    const watching = mySeat === null;
    $("watching").classList.toggle("hidden", !watching);
    try {
      meta = await api("GET", "/api/meta");
    } catch (_) { /* hints stay off */ }
    try {
      const first = await api("GET", "/api/games/" + encodeURIComponent(gameId) + "?since=0");
      await show(first, false);
      document.title = "Shelfie dice — " + first.seats.map((s) => s.name).join(" vs ");
      await joinSeat();
    } catch (err) {
      $("status").textContent = err.status === 404 ? "There is no such game." : "Error: " + err.message;
    }
    setBusy(false);
    setTimeout(poll, POLL_MS);
  }

  init();
})();
