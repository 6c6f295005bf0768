/* The review of a finished game, on the end screen: each turn's luck, each player's result
   with and without the luck, and the three biggest mistakes with the better move
   (GET /api/games/{id}/review). Shown once the result panel is; computed when asked for, and at
   once for a solo game, whose review is exact (the score against E*, the loss per decision). */
"use strict";

(() => {
  const { el, api, icon, fixed, FACES } = Shelfie;
  const $ = (id) => document.getElementById(id);
  const gameId = decodeURIComponent(window.location.pathname.split("/").pop());
  const MARKS = { "very lucky": "++", lucky: "+", unlucky: "−", "very unlucky": "−−" };
  let loading = false;

  const signed = (x) => fixed(x, 2, true);

  /** The review section shows (with its button) once the game's result does. */
  function followResult() {
    const result = $("result");
    const review = $("review");
    if (!result || !review) return;
    const sync = () => {
      review.classList.toggle("hidden", result.classList.contains("hidden"));
      const solo = review.dataset.players === "1";
      $("review-value").parentElement.classList.toggle("hidden", solo); // a solo review is exact
      if (solo && !review.classList.contains("hidden") && document.body.dataset.review === undefined) load();
    };
    new MutationObserver(sync).observe(result, { attributes: true, attributeFilter: ["class"] });
    sync();
  }

  function diceRow(names) {
    const span = el("span", "review-dice");
    for (const name of names) {
      const face = FACES.indexOf(name);
      const die = el("span", "review-die f-" + name);
      die.title = name;
      die.appendChild(icon(face));
      span.appendChild(die);
    }
    return span;
  }

  function resultsTable(review) {
    const table = el("table", "review-table");
    table.id = "review-results";
    const head = el("tr");
    for (const h of ["Player", "Score", "Result", "Own luck", "Luck-adjusted", "Regret", "Mistakes", "Blunders"]) {
      head.appendChild(el("th", null, h));
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    for (const p of review.players) {
      const tr = el("tr");
      tr.dataset.seat = p.seat;
      tr.appendChild(el("th", null, p.name));
      const cells = [String(p.score), signed(p.result), signed(p.luck), signed(p.adjusted), fixed(p.regret, 2),
        String(p.mistakes), String(p.blunders)];
      cells.forEach((text, i) => tr.appendChild(el("td", i === 3 ? "adjusted" : "", text)));
      body.appendChild(tr);
    }
    return table;
  }

  function luckCell(turn, scale) {
    const td = el("td", "luck-cell");
    if (!turn) return td;
    td.dataset.luck = turn.luck.toFixed(4);
    const bar = el("span", "luck-bar");
    const fill = el("span", "luck-fill " + (turn.luck >= 0 ? "pos" : "neg"));
    fill.style.width = (Math.min(1, Math.abs(turn.luck) / scale) * 50).toFixed(1) + "%";
    bar.appendChild(fill);
    td.appendChild(bar);
    td.appendChild(el("span", "luck-value", signed(turn.luck)));
    if (turn.mark) {
      const mark = el("span", "luck-mark " + (turn.luck >= 0 ? "pos" : "neg"), MARKS[turn.mark]);
      mark.title = turn.mark;
      td.appendChild(mark);
    }
    return td;
  }

  function luckTable(review) {
    const table = el("table", "review-table luck");
    table.id = "review-luck";
    const head = el("tr");
    head.appendChild(el("th", null, "Round"));
    review.players.forEach((p) => head.appendChild(el("th", null, p.name)));
    table.appendChild(el("thead")).appendChild(head);
    const rounds = new Map();
    for (const t of review.turns) {
      if (!rounds.has(t.round)) rounds.set(t.round, {});
      rounds.get(t.round)[t.seat] = t;
    }
    const scale = Math.max(0.5, ...review.turns.map((t) => Math.abs(t.luck)));
    const body = table.appendChild(el("tbody"));
    for (const [round, bySeat] of [...rounds.entries()].sort((a, b) => a[0] - b[0])) {
      const tr = el("tr");
      tr.dataset.round = round;
      tr.appendChild(el("th", null, String(round)));
      review.players.forEach((p) => tr.appendChild(luckCell(bySeat[p.seat], scale)));
      body.appendChild(tr);
    }
    const total = el("tr", "total");
    total.appendChild(el("th", null, "Total"));
    review.players.forEach((p) => total.appendChild(el("td", "luck-total", signed(p.luck))));
    table.appendChild(el("tfoot")).appendChild(total);
    return table;
  }

  function situation(m) {
    if (m.phase === "reroll") return m.rolls_left + (m.rolls_left === 1 ? " reroll" : " rerolls") + " left";
    if (m.phase === "circle") return m.dice.length ? "dice left to circle with" : "no dice left";
    return "nothing to circle: a row must be crossed out";
  }

  function winPoints(regret, players) {
    if (players !== 2) return "";
    const points = Math.round(regret * 50);
    return points >= 1 ? " (about " + points + (points === 1 ? " point" : " points") + " of win chance)"
      : " (under a point of win chance)";
  }

  function mistakesList(review) {
    const list = el("ol", "review-mistakes");
    list.id = "review-mistakes";
    for (const m of review.mistakes) {
      const li = el("li");
      li.dataset.move = m.move;
      const who = review.players[m.seat].name;
      li.appendChild(el("div", "mistake-head", "Move " + m.move + ", round " + m.round + " — " + who));
      const where = el("div", "mistake-dice");
      where.appendChild(diceRow(m.dice));
      where.appendChild(el("span", "muted", " " + situation(m)));
      li.appendChild(where);
      const played = el("div", "mistake-played");
      played.append(el("span", "label", "Played "), el("strong", "played", m.played));
      const better = el("div", "mistake-better");
      better.append(el("span", "label", "Better "), el("strong", "better", m.better));
      li.append(played, better, el("div", "mistake-cost", review.num_players === 1
        ? "Cost " + fixed(m.regret, 2) + " expected final points (" + fixed(m.value, 2) + " instead of " +
          fixed(m.best_value, 2) + ")"
        : "Cost " + fixed(m.regret, 3) + winPoints(m.regret, review.num_players)));
      list.appendChild(li);
    }
    return list;
  }

  /** A solo game's exact review: the score against E*, what the dice gave and what the decisions
      cost, the loss per decision, each turn's luck and the biggest mistakes, in expected final points. */
  function renderSolo(review) {
    const body = $("review-body");
    const p = review.players[0];
    body.appendChild(el("p", "review-unit",
      "The solo game is solved: every value here is exact, in " + review.unit + "."));
    body.appendChild(el("h3", null, "Against perfect play"));
    const table = el("table", "review-table");
    table.id = "review-solo";
    const fresh = Math.abs(review.start_value - review.optimum) < 1e-9;
    const rows = [
      [p.resigned ? "Score (resigned)" : "Score", String(p.score)],
      ["E*: perfect play's average from the empty shelf", fixed(review.optimum, 2)],
      ...(fresh ? [] : [["The first position's value", fixed(review.start_value, 2)]]),
      ["Luck of the dice", signed(p.luck)],
      ["Lost by the decisions", fixed(p.regret, 2)],
      ["Loss per decision", fixed(p.loss_per_decision, 3)],
      ["Decisions", String(p.decisions)],
      ["Mistakes (" + review.thresholds.mistake + " points or more)", String(p.mistakes)],
      ["Blunders (" + review.thresholds.blunder + " points or more)", String(p.blunders)],
    ];
    const tbody = table.appendChild(el("tbody"));
    for (const [label, value] of rows) {
      const tr = tbody.appendChild(el("tr"));
      tr.append(el("th", null, label), el("td", null, value));
    }
    body.appendChild(el("div", "result-wrap")).appendChild(table);
    body.appendChild(el("p", "muted review-note", p.resigned
      ? "The game was resigned: the score is the one it had then."
      : "The score is " + (fresh ? "E*" : "the first position's value") + " plus the luck of the dice minus " +
        "what the decisions lost. A decision's loss: the best move's value minus the value of the move played."));
    body.appendChild(el("h3", null, "Luck per turn"));
    body.appendChild(el("div", "result-wrap")).appendChild(luckTable(review));
    body.appendChild(el("p", "muted review-note",
      "A turn's luck: the value after its rolls minus the average over everything they could have shown. " +
      "+ lucky, − unlucky (" + review.thresholds.lucky + " points or more either way); ++ / −− very (" +
      review.thresholds.very_lucky + " or more)."));
    body.appendChild(el("h3", null, review.mistakes.length ? "Biggest mistakes" : "No mistakes"));
    if (review.mistakes.length) body.appendChild(mistakesList(review));
    else body.appendChild(el("p", null, "Every move played was a best move."));
    body.classList.remove("hidden");
  }

  function render(review) {
    const body = $("review-body");
    body.replaceChildren();
    if (review.num_players === 1) {
      renderSolo(review);
      return;
    }
    const by = review.value === "planner" ? "the planner's" : review.value + "'s";
    body.appendChild(el("p", "review-unit",
      "Values by " + by + " exact search over the dice, in units of " + review.unit + "."));
    body.appendChild(el("h3", null, "Results"));
    body.appendChild(el("div", "result-wrap")).appendChild(resultsTable(review));
    body.appendChild(el("p", "muted review-note",
      "Own luck: the sum of the luck of the player's rolls. Luck-adjusted: the result less the player's " +
      "own luck plus their share of the rivals' — what the result would have been with average dice. " +
      "Regret: what the player's moves cost in all, against the best move each time; a mistake costs " +
      review.thresholds.mistake.toFixed(2) + " or more, a blunder " + review.thresholds.blunder.toFixed(2) +
      " or more."));
    body.appendChild(el("h3", null, "Luck per turn"));
    body.appendChild(el("div", "result-wrap")).appendChild(luckTable(review));
    body.appendChild(el("p", "muted review-note",
      "A turn's luck: the value after its rolls minus the average over everything they could have shown. " +
      "+ lucky, − unlucky (" + review.thresholds.lucky.toFixed(2) + " or more either way); ++ / −− very (" +
      review.thresholds.very_lucky.toFixed(2) + " or more)."));
    body.appendChild(el("h3", null, review.mistakes.length ? "Biggest mistakes" : "No mistakes"));
    if (review.mistakes.length) body.appendChild(mistakesList(review));
    else body.appendChild(el("p", null, "Every move played was the best by this search."));
    body.classList.remove("hidden");
  }

  /** Each player's error rate as a rating, and the level suggested next (GET .../error-rating). */
  function renderErrorRating(data) {
    const body = $("review-body");
    body.appendChild(el("h3", null, "Rating from the error rate"));
    if (!data.available) {
      body.appendChild(el("p", "muted review-note", data.message + "."));
      return;
    }
    const table = el("table", "review-table");
    table.id = "review-rating";
    const head = el("tr");
    for (const h of ["Player", "Regret per decision", "Decisions", "Rating [95 %]", "Next game"]) {
      head.appendChild(el("th", null, h));
    }
    table.appendChild(el("thead")).appendChild(head);
    const tbody = table.appendChild(el("tbody"));
    for (const p of data.players) {
      const tr = el("tr");
      tr.dataset.seat = p.seat;
      tr.appendChild(el("th", null, p.name));
      const rating = p.rating === null ? "—"
        : Math.round(p.rating) + " [" + Math.round(p.ci95[0]) + ", " + Math.round(p.ci95[1]) + "]";
      for (const text of [fixed(p.regret, 4), String(p.decisions), rating, p.suggested_label || "—"]) {
        tr.appendChild(el("td", null, text));
      }
      tbody.appendChild(tr);
    }
    body.appendChild(el("div", "result-wrap")).appendChild(table);
    body.appendChild(el("p", "muted review-note",
      "The rating each player's regret per decision corresponds to, by a line from regret to rating measured " +
      "on games the levels played (td's review). One game is a small sample: the interval is wide. Next game: " +
      "the level nearest the player's rating (their rating after this game where it was rated, else this estimate)."));
  }

  async function loadErrorRating() {
    try {
      renderErrorRating(await api("GET", "/api/games/" + encodeURIComponent(gameId) + "/error-rating"));
    } catch (_) { /* the review stands without it */ }
  }

  async function load() {
    if (loading) return;
    loading = true;
    const button = $("review-open");
    const value = $("review-value").value;
    button.disabled = true;
    button.textContent = "Reviewing…";
    $("review-error").textContent = "";
    document.body.dataset.review = "loading";
    try {
      const review = await api("GET", "/api/games/" + encodeURIComponent(gameId) + "/review?value=" +
        encodeURIComponent(value));
      render(review);
      if (value === "td" && review.num_players > 1) await loadErrorRating();
      button.classList.add("hidden");
      document.body.dataset.review = "shown";
    } catch (err) {
      $("review-error").textContent = err.message;
      button.textContent = "Review the game";
      document.body.dataset.review = "error";
    } finally {
      button.disabled = false;
      loading = false;
    }
  }

  function init() {
    if (!$("review")) return;
    $("review-open").addEventListener("click", load);
    $("review-value").addEventListener("change", () => { if (!$("review-body").classList.contains("hidden")) load(); });
    followResult();
  }

  init();
})();
