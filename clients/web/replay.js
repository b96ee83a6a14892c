// The replay of a finished match (GET /matches/{id}/replay): step through it update by
// update and round by round as any viewer (a seat, a spectator, everything), on the
// game's own board, with the log's verification and a permalink to the step shown:
// `#replay=ID&as=1&round=7` (and `&n=` for one update of it).

import { boardOf } from "./boards/index.js";
import { announce, api, fill, h, heldSeat } from "./ui.js";

export function showReplay(root, { match, as, round, n, audit }) {
  let auditKey = audit || null;
  const page = { page: "replay", match };
  const title = h("h1", {}, `Replay of ${match}`);
  const errors = h("p", { class: "error", role: "alert" });
  const verified = h("section", { class: "card verify", "aria-labelledby": "verify-h" });
  const viewerSelect = h("select", { id: "replay-as" });
  const slider = h("input", { type: "range", id: "replay-step", min: 1, max: 1, value: 1 });
  const position = h("p", { class: "replay-position", "aria-live": "polite", id: "replay-position" });
  const eventsList = h("ul", { class: "log", "aria-label": "this update's events" });
  const permalink = h("a", { id: "permalink" }, "Permalink to this step");
  const boardRoot = h("section", { class: "board", "aria-label": "board" });
  const button = (label, text, fn, keys) => h("button", { type: "button", "aria-label": label, "aria-keyshortcuts": keys, onclick: fn }, text);
  const controls = h("div", { class: "replay-controls", role: "group", "aria-label": "step through the match" },
    button("first update", "|◀", () => go(0), "Home"),
    button("previous round", "◀◀", () => goRound(-1), "PageUp"),
    button("previous update", "◀", () => go(index - 1), "ArrowLeft"),
    button("next update", "▶", () => go(index + 1), "ArrowRight"),
    button("next round", "▶▶", () => goRound(1), "PageDown"),
    button("last update", "▶|", () => go(updates.length - 1), "End"));
  root.append(
    h("div", { class: "match-head" }, title),
    errors,
    h("section", { class: "card replay-bar", "aria-label": "replay" },
      h("div", { class: "row" }, h("label", { for: "replay-as" }, "As"), viewerSelect),
      auditForm(),
      controls,
      h("div", { class: "row" }, h("label", { for: "replay-step" }, "Update"), slider),
      position,
      h("p", { class: "hint" }, "Keys: ← → an update, Page Up / Page Down a round, Home / End. ", permalink)),
    h("div", { class: "match-body" }, boardRoot,
      h("aside", { class: "side" }, verified, h("h2", {}, "This update"), eventsList)));

  let updates = [];
  let index = 0;
  let module = null;
  let board = null;
  let finalMaze = null;
  const ctx = { readonly: true, you: null, player: false, send: async () => ({ type: "error", code: "replay", message: "a replay sends nothing" }), announce };

  const onKey = (event) => {
    if (["SELECT", "INPUT", "TEXTAREA"].includes(event.target.tagName) || event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowLeft: () => go(index - 1), ArrowRight: () => go(index + 1), PageUp: () => goRound(-1), PageDown: () => goRound(1), Home: () => go(0), End: () => go(updates.length - 1) };
    if (moves[event.key]) {
      event.preventDefault();
      moves[event.key]();
    }
  };
  // The keys work wherever the focus is on the page (not in a field being typed in).
  document.addEventListener("keydown", onKey);
  page.close = () => document.removeEventListener("keydown", onKey);
  slider.addEventListener("input", () => go(Number(slider.value) - 1));
  viewerSelect.addEventListener("change", () => load(viewerSelect.value, currentRound(), null));

  start();
  return page;

  function auditForm() {
    const input = h("input", { id: "replay-audit", type: "text", autocomplete: "off", spellcheck: "false", value: auditKey || "" });
    const form = h("form", { class: "row" },
      h("label", { for: "replay-audit" }, "Audit key"), input, h("button", { type: "submit", class: "small" }, "Use it"),
      h("span", { class: "hint" }, "(a match that keeps secrets after its end shows them with it)"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      auditKey = input.value.trim() || null;
      load(viewerSelect.value, currentRound(), null);
    });
    return form;
  }

  async function start() {
    const publicView = await api(`/matches/${encodeURIComponent(match)}`);
    if (!publicView.ok) {
      errors.textContent = publicView.body.error.message;
      return;
    }
    const view = publicView.body;
    if (!view.ended) {
      errors.textContent = "The replay opens when the match is over: ";
      errors.append(h("a", { href: `/#match=${encodeURIComponent(match)}` }, "watch it live"));
      return;
    }
    module = await boardOf(view.game);
    const games = await api("/games");
    const game = games.ok ? games.body.games.find((g) => g.name === view.game) : null;
    title.textContent = `Replay: ${game ? game.title : view.game}, ${view.variant} (${match})`;
    finalMaze = view.game_state && view.game_state.maze ? view.game_state.maze : null;
    fill(viewerSelect,
      h("option", { value: "full" }, "Everything"),
      h("option", { value: "spectator" }, "A spectator"),
      view.seats.map((s) => h("option", { value: String(s.seat) }, `Seat ${s.seat}: ${s.name}`)));
    await load(as || "full", round, n);
  }

  async function load(who, wantRound, wantN) {
    viewerSelect.value = who;
    // A seat's own view of a match that seals needs the seat's token (held by the browser
    // that played it) or the match's audit key.
    const held = heldSeat(match);
    let query = `as=${encodeURIComponent(who)}`;
    if (auditKey) query += `&audit=${encodeURIComponent(auditKey)}`;
    else if (held && String(held.seat) === who) query += `&token=${encodeURIComponent(held.token)}`;
    const answer = await api(`/matches/${encodeURIComponent(match)}/replay?${query}`);
    if (!answer.ok) {
      errors.textContent = answer.body.error.message;
      return;
    }
    errors.textContent = "";
    updates = answer.body.updates;
    page.replay = answer.body;
    showVerified(answer.body.verified);
    slider.max = String(Math.max(1, updates.length));
    board = module.create(boardRoot, ctx);
    let at = updates.length - 1;
    if (wantN !== null && wantN !== undefined) at = Math.min(updates.length - 1, Math.max(0, wantN - 1));
    else if (wantRound !== null && wantRound !== undefined) {
      const found = updates.findIndex((u) => u.round === wantRound);
      if (found >= 0) at = found;
    }
    go(at);
  }

  function currentRound() {
    return updates[index] ? updates[index].round : null;
  }

  function goRound(direction) {
    const r = currentRound();
    if (direction < 0) {
      // the first update of this round, or if there already, of the round before
      const first = updates.findIndex((u) => u.round === r);
      if (first < index) return go(first);
      const before = updates.slice(0, index).reverse().find((u) => u.round !== r);
      if (!before) return go(0);
      return go(updates.findIndex((u) => u.round === before.round));
    }
    const next = updates.findIndex((u, i) => i > index && u.round !== r);
    return go(next < 0 ? updates.length - 1 : next);
  }

  function go(i) {
    if (!updates.length) {
      position.textContent = "This viewer received no update.";
      return;
    }
    index = Math.max(0, Math.min(updates.length - 1, i));
    const u = updates[index];
    let view = u.view;
    if (finalMaze && view.game_state && !view.game_state.maze) {
      // the maze, known now, drawn under the match as it was
      view = { ...view, game_state: { ...view.game_state, maze: finalMaze } };
    }
    ctx.you = view.you;
    board.update(view, u.events, ctx);
    slider.value = String(index + 1);
    const roundText = u.round !== null && u.round !== undefined ? `, round ${u.round}` : "";
    const when = new Date(u.ts).toISOString().replace("T", " ").slice(0, 19);
    position.textContent = `Update ${u.n} of ${updates.length}${roundText} (log entry ${u.seq}, ${when} UTC)`;
    fill(eventsList, u.events.map((e) => h("li", {}, describe(view, e))));
    const who = viewerSelect.value;
    const hash = `#replay=${encodeURIComponent(match)}&as=${encodeURIComponent(who)}${u.round !== null && u.round !== undefined ? `&round=${u.round}` : ""}&n=${u.n}`;
    history.replaceState(null, "", hash);
    permalink.href = `${location.origin}/${hash}`;
    page.index = index;
    page.view = view;
  }

  function describe(view, event) {
    switch (event.type) {
      case "seat_taken": return `${event.name} took seat ${event.seat}.`;
      case "match_started": return "The match started.";
      case "match_ended": return `The match ended: ${event.reason}.`;
      case "revealed": return `The seed and setup were revealed (commitment ${event.commitment.slice(0, 16)}…).`;
      default: return (module.describe && module.describe(event, view)) || event.type;
    }
  }

  function showVerified(v) {
    const setup = v.setup === "seed" ? "the setup drawn again from the revealed seed, and the same"
      : v.setup === "host" ? "the setup given by the match's host (not drawn from the seed)" : "no setup drawn";
    fill(verified,
      h("h2", { id: "verify-h" }, v.ok ? "✓ Verified" : "✗ Does not verify"),
      v.ok
        ? h("p", { class: "ok-text" }, `The server folded the log's ${v.entries} entries again: every digest of the chain and every outcome as recorded; the revealed seed and setup match the commitment published at the start; ${setup}.`)
        : h("p", { class: "error" }, `At entry ${v.failed_seq}${v.failed_round !== null ? ` (round ${v.failed_round})` : ""}: ${v.failure}`),
      h("p", { class: "hint" }, "Commitment: ", h("code", { class: "wrap" }, v.commitment || "—")),
      h("p", {}, h("a", { href: `/matches/${encodeURIComponent(match)}/log`, download: `${match}.jsonl` }, "Download the log"),
        " and check it yourself: ", h("code", {}, `daedalus replay ${match}.jsonl --verify`)));
  }
}
