/* The person page (/me): this browser's person's rating per table size, a plot of it over their
   rated games (inline SVG, the levels as dashed lines) and the list of their finished games
   (POST /api/person with the person key kept in local storage). */
"use strict";

(() => {
  const { el, api, personKey, levelLabel, ratingText, ratingRulesText } = Shelfie;
  const $ = (id) => document.getElementById(id);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const W = 640, H = 240, PAD = { left: 48, right: 104, top: 12, bottom: 28 };
  const LABEL_GAP = 12; // the least vertical distance between two levels' labels

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** The points of a table size's plot: the start, then the rating after each rated game, oldest first. */
  function series(report, n) {
    const rated = report.games.filter((g) => g.rated && String(g.players) === String(n)).reverse();
    if (!rated.length) return [];
    const first = { rating: rated[0].before, rd: report.start.rd };
    return [first, ...rated.map((g) => ({ rating: g.after, rd: g.rd, game: g.game_id }))];
  }

  /** The plot of one table size: the rating over the rated games, its ± band, the levels' ratings. */
  function plot(points, levels, n) {
    const figure = el("figure", "rating-plot");
    figure.dataset.players = String(n);
    const lows = points.map((p) => p.rating - p.rd), highs = points.map((p) => p.rating + p.rd);
    const ratings = levels.map((l) => l.rating);
    const lo = Math.min(...lows, ...ratings) - 20, hi = Math.max(...highs, ...ratings) + 20;
    const x = (i) => PAD.left + (points.length === 1 ? 0 : i * (W - PAD.left - PAD.right) / (points.length - 1));
    const y = (r) => PAD.top + (hi - r) * (H - PAD.top - PAD.bottom) / (hi - lo);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "rating-svg",
      "aria-label": "Your rating at " + n + " players over " + (points.length - 1) + " rated games" });
    chart.appendChild(svg("rect", { x: PAD.left, y: PAD.top, width: W - PAD.left - PAD.right,
      height: H - PAD.top - PAD.bottom, class: "plot-area" }));
    for (const l of levels) {
      chart.appendChild(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(l.rating), y2: y(l.rating),
        class: "plot-level" }));
    }
    let below = -Infinity; // labels from the top down, each at least LABEL_GAP under the one above
    for (const l of [...levels].sort((a, b) => b.rating - a.rating)) {
      const at = Math.max(y(l.rating) + 4, below + LABEL_GAP);
      below = at;
      const text = svg("text", { x: W - PAD.right + 4, y: at, class: "plot-level-label" },
        l.spec + " " + Math.round(l.rating));
      text.appendChild(svg("title", {}, levelLabel(l)));
      chart.appendChild(text);
    }
    const band = points.map((p, i) => `${x(i)},${y(p.rating + p.rd)}`)
      .concat(points.map((p, i) => `${x(i)},${y(p.rating - p.rd)}`).reverse());
    chart.appendChild(svg("polygon", { points: band.join(" "), class: "plot-band" }));
    chart.appendChild(svg("polyline", { points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(" "),
      class: "plot-line" }));
    points.forEach((p, i) => chart.appendChild(svg("circle", { cx: x(i), cy: y(p.rating), r: 3, class: "plot-dot" })));
    for (const r of [lo + 20, (lo + hi) / 2, hi - 20]) {
      chart.appendChild(svg("text", { x: PAD.left - 6, y: y(r) + 4, class: "plot-axis", "text-anchor": "end" },
        String(Math.round(r))));
    }
    chart.appendChild(svg("text", { x: PAD.left, y: H - 8, class: "plot-axis" }, "start"));
    chart.appendChild(svg("text", { x: W - PAD.right, y: H - 8, class: "plot-axis", "text-anchor": "end" },
      (points.length - 1) + " rated game" + (points.length === 2 ? "" : "s")));
    figure.appendChild(chart);
    figure.appendChild(el("figcaption", "muted", n + " players: the line is your rating after each rated game, " +
      "the band ± its uncertainty, the dashed lines the levels."));
    return figure;
  }

  function renderRatings(report, meta) {
    const list = $("ratings");
    list.replaceChildren();
    const sizes = Object.keys(report.ratings).sort();
    if (!sizes.length) list.appendChild(el("li", "muted", "No rating yet: finish a game against a level."));
    for (const n of sizes) {
      const r = report.ratings[n];
      const level = ((meta.levels || {})[n] || []).find((l) => l.spec === r.suggested_level);
      const li = el("li", null, n + " players: " + ratingText(r.rating, r.rd) + " after " + r.games + " rated game" +
        (r.games === 1 ? "" : "s") + (level ? " — next: " + levelLabel(level) : ""));
      li.dataset.players = n;
      list.appendChild(li);
    }
    const plots = $("plots");
    plots.replaceChildren();
    for (const n of sizes) {
      const points = series(report, n);
      if (points.length > 1) plots.appendChild(plot(points, (meta.levels || {})[n] || [], n));
    }
    $("plots-panel").classList.toggle("hidden", plots.children.length === 0);
  }

  function renderGames(report) {
    const table = $("games");
    table.replaceChildren();
    $("no-games").classList.toggle("hidden", report.games.length > 0);
    if (!report.games.length) return;
    const head = el("tr");
    for (const h of ["Finished", "Players", "Table", "Your score", "Rating"]) head.appendChild(el("th", null, h));
    table.appendChild(head);
    for (const g of report.games) {
      const tr = el("tr");
      tr.dataset.game = g.game_id;
      const when = el("td");
      const link = el("a", null, new Date(g.time * 1000).toLocaleString());
      link.href = "/g/" + encodeURIComponent(g.game_id);
      when.appendChild(link);
      const others = g.names.map((name, i) => i === g.seat ? null : name + " " + g.scores[i]).filter(Boolean);
      const rating = g.rated ? ratingText(g.after, g.rd, g.change) : "unrated: " + g.reason;
      tr.append(when, el("td", null, String(g.players)), el("td", null, others.join(", ")),
        el("td", null, String(g.scores[g.seat]) + (g.resigned === g.seat ? " (resigned or left)" : "")),
        el("td", g.rated ? "rated" : "unrated", rating));
      table.appendChild(tr);
    }
  }

  async function init() {
    const key = personKey();
    let meta = {};
    try { meta = await api("GET", "/api/meta"); } catch (_) { /* the plots go without the levels */ }
    try {
      const report = key ? await api("POST", "/api/person", { person: key }) : { ratings: {}, games: [], start: {} };
      const rules = report.rules || meta.rating_rules;
      if (rules) $("rating-rules").textContent = ratingRulesText(rules);
      renderRatings(report, meta);
      renderGames(report);
    } catch (err) {
      $("me-error").textContent = err.message;
    }
    document.body.dataset.ready = "1";
  }

  init();
})();
