// A match: taking a seat (from a seat link, or a free seat), then the game's board with
// what every board shares: the clock, what the game waits for, the seats, the log of
// events, the result, and the connection's state. The board is the game's own module,
// boards/<game>.js, loaded by the game's name.

import { boardOf } from "./boards/index.js";
import { MatchConnection, randomId } from "./conn.js";
import { announce, api, duration, fill, h, heldSeat, holdSeat, seatLink, seatName, watchLink } from "./ui.js";

const LOG_LIMIT = 200;

export function showMatch(root, { match, seat, token, board }) {
  const page = {
    page: "match", match, conn: null, board: null, closed: false,
    close() {
      this.closed = true;
      clearInterval(this.clockTimer);
      if (this.conn) this.conn.close();
    },
  };
  const title = h("h1", { id: "match-title" }, `Match ${match}`);
  const status = h("p", { class: "conn", role: "status", "aria-live": "polite" }, "loading…");
  const clock = h("p", { class: "clock", "aria-live": "off" },
    h("span", { class: "label" }, "Clock "), h("span", { class: "time", id: "clock" }, "—"));
  const waiting = h("p", { class: "waiting", id: "waiting", "aria-live": "polite" });
  // A match with a spectator delay: its spectators are told how far behind they are.
  const delayNote = h("p", { class: "delay", id: "delay", hidden: true });
  const seatsList = h("ul", { class: "seats", "aria-label": "seats" });
  const claim = h("section", { class: "card claim", hidden: true });
  const boardRoot = h("section", { class: "board", "aria-label": "board" });
  const result = h("section", { class: "card result", hidden: true, "aria-live": "polite" });
  const errors = h("p", { class: "error", role: "alert" });
  const logList = h("ol", { class: "log", "aria-label": "events" });
  const logBox = h("details", { class: "card events" }, h("summary", {}, "Events"), logList);
  root.append(
    h("div", { class: "match-head" }, title, status),
    h("div", { class: "match-bar" }, clock, waiting, delayNote),
    errors, claim, result,
    h("div", { class: "match-body" }, boardRoot, h("aside", { class: "side" }, h("h2", {}, "Seats"), seatsList, logBox)),
  );
  page.clockTimer = setInterval(tick, 250);
  start();
  return page;

  async function start() {
    const publicView = await api(`/matches/${encodeURIComponent(match)}`);
    if (page.closed) return;
    if (!publicView.ok) {
      fill(status, "");
      errors.textContent = publicView.body.error.message;
      title.textContent = publicView.status === 410 ? "Match expired" : "No such match";
      return;
    }
    const view = publicView.body;
    const module = { default: await boardOf(board === "generic" ? "generic" : view.game) };
    if (page.closed) return;
    page.module = module.default;
    const games = await api("/games");
    const game = games.ok ? games.body.games.find((g) => g.name === view.game) : null;
    const variant = game ? game.variants.find((v) => v.name === view.variant) : null;
    title.textContent = `${game ? game.title : module.default.title || view.game} — ${variant && variant.title ? variant.title : view.variant}`;
    showSeats(view, null);

    if (token && seat !== null && view.seats[seat] && view.seats[seat].name === null && !view.started) {
      showClaim(view, seat, token); // a seat link not used yet
      return;
    }
    const held = token ? { seat, token } : heldSeat(match);
    if (held && held.token) {
      connect(held.token);
      return;
    }
    connect(null);
    if (!view.started && view.seats.some((s) => s.name === null)) showClaim(view, null, null);
  }

  function showClaim(view, wanted, linkToken) {
    claim.hidden = false;
    const free = view.seats.filter((s) => s.name === null).map((s) => s.seat);
    const name = h("input", { id: "claim-name", type: "text", maxlength: 40, required: true, autocomplete: "nickname" });
    const seatSelect = wanted === null
      ? h("select", { id: "claim-seat" }, free.map((s) => h("option", { value: s }, `seat ${s}`)))
      : null;
    const feedback = h("p", { class: "feedback", role: "status" });
    const form = h("form", {},
      h("h2", {}, wanted === null ? "Take a free seat" : `Take seat ${wanted}`),
      h("div", { class: "row" }, h("label", { for: "claim-name" }, "Your name"), name),
      seatSelect && h("div", { class: "row" }, h("label", { for: "claim-seat" }, "Seat"), seatSelect),
      h("button", { type: "submit", class: "primary" }, wanted === null ? "Take the seat" : `Take seat ${wanted}`),
      feedback);
    fill(claim, form);
    name.focus();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const theSeat = wanted === null ? Number(seatSelect.value) : wanted;
      const theToken = linkToken || randomId(32);
      feedback.textContent = "Taking the seat…";
      const answer = await api(`/matches/${encodeURIComponent(match)}/seats`, {
        // The player's own entropy, mixed into the match's draws (docs/fairness.md).
        body: { name: name.value, seat: theSeat, token: theToken, entropy: randomId(64) },
      });
      if (!answer.ok) {
        feedback.textContent = `Refused (${answer.body.error.code}): ${answer.body.error.message}`;
        feedback.className = "feedback error";
        return;
      }
      holdSeat(match, answer.body.seat, theToken);
      page.claimReceipt = answer.body.receipt;
      claim.hidden = true;
      // The address becomes the seat's own link (a bookmark of it takes the seat back).
      history.replaceState(null, "", new URL(seatLink(match, answer.body.seat, theToken)).hash);
      if (page.conn) page.conn.close();
      page.board = null;
      connect(theToken);
    });
  }

  function connect(seatToken) {
    const conn = new MatchConnection(match, { token: seatToken });
    page.conn = conn;
    conn.keepReceipt(page.claimReceipt);
    conn.on("onStatus", (text, state) => {
      status.textContent = seatToken ? `${text}` : `watching — ${text}`;
      status.dataset.state = state;
    });
    conn.on("onWelcome", (frame) => {
      if (frame.role === "player") holdSeat(match, frame.seat, seatToken);
      showDelay(frame.delay);
      render(frame.view, [], frame);
    });
    conn.on("onUpdate", (frame) => render(frame.view, frame.events, frame));
    conn.on("onResync", (frame) => {
      addLog(`The server numbered this view's updates again (its store lost entries): showing the match as it is now.`);
      render(frame.view, [], frame);
    });
    conn.on("onError", (frame) => {
      if (frame.code === "bad_token") {
        errors.textContent = "This link's token holds no seat in this match (someone else took that seat?). You are watching.";
        conn.close();
        connect(null);
        return;
      }
      if (!frame.id) errors.textContent = `${frame.code}: ${frame.message}`;
    });
    conn.connect();
  }

  function showDelay(delay) {
    delayNote.hidden = !delay;
    if (!delay) return;
    const by = delay.rounds !== undefined
      ? `${delay.rounds} round${delay.rounds === 1 ? "" : "s"}`
      : `${delay.seconds} s`;
    delayNote.textContent = `Delayed by ${by}: spectators see this match ${by} late, and all of it once it is over.`;
  }

  function ctx() {
    const view = page.conn.view;
    return {
      conn: page.conn,
      you: view ? view.you : null,
      player: view ? view.you !== null && view.you !== undefined : false,
      send: (command, feedback, about) => sendCommand(page.conn, command, feedback, about),
      announce,
    };
  }

  function render(view, events, frame) {
    if (!page.board) {
      page.board = page.module.create(boardRoot, ctx());
    }
    page.view = view;
    showSeats(view, view.you);
    for (const event of events) {
      const text = describe(view, event);
      if (text) addLog(text, frame.seq);
    }
    page.board.update(view, events, ctx());
    if (view.ended) delayNote.hidden = true;
    waiting.textContent = waitingFor(view);
    showResult(view);
    tick();
  }

  function describe(view, event) {
    switch (event.type) {
      case "seat_taken": return `${event.name} took seat ${event.seat}.`;
      case "match_started": return "The match started.";
      case "match_ended": return `The match ended: ${event.reason}.`;
      case "revealed": return "The seed and setup were revealed.";
      default: return page.module.describe ? page.module.describe(event, view) : null;
    }
  }

  function waitingFor(view) {
    if (view.ended) return "The match is over.";
    if (!view.started) {
      const free = view.seats.filter((s) => s.name === null).length;
      return `Waiting for players: ${free} of ${view.seats.length} seats free.`;
    }
    return page.module.waitingFor(view) || "";
  }

  function showSeats(view, you) {
    fill(seatsList, view.seats.map((s) =>
      h("li", { class: s.seat === you ? "you" : "" },
        h("span", { class: "seat-no" }, s.seat), " ", s.name || h("em", {}, "free"),
        s.seat === you ? h("strong", {}, " (you)") : null)));
  }

  function showResult(view) {
    if (!view.ended || !view.result) return;
    if (!result.hidden) return;
    result.hidden = false;
    const r = view.result;
    const won = r.winner === null ? "A draw" : `${seatName(view, r.winner)} won`;
    const mine = view.you !== null && view.you !== undefined
      ? (r.winner === view.you ? " — you won!" : r.winner === null ? "" : " — you lost") : "";
    fill(result,
      h("h2", { id: "result-h" }, `${won}${mine}`),
      h("p", {}, r.reason, r.scores && r.scores.length ? ` (scores ${r.scores.join(" : ")})` : ""),
      h("p", {},
        h("a", { href: `/matches/${encodeURIComponent(match)}/log`, download: `${match}.jsonl` }, "Download the log"),
        " (check it with ", h("code", {}, `daedalus replay ${match}.jsonl --verify`), ")"),
      page.conn && page.conn.receipts.length ? h("p", {},
        h("a", { id: "receipts", download: `${match}-receipts.jsonl`,
                 href: URL.createObjectURL(new Blob([page.conn.receiptsText()], { type: "application/x-ndjson" })) },
          "Download your receipts"),
        " (hold the log against what the server signed: ",
        h("code", {}, `daedalus replay ${match}.jsonl --verify --receipts ${match}-receipts.jsonl`), ")") : null,
      h("p", {}, h("a", { href: `/#replay=${encodeURIComponent(match)}&as=${view.you ?? "full"}&n=1`, class: "button" }, "Replay it"),
        " ", h("a", { href: "/#" }, "Back to the lobby")));
    announce(`${won}${mine}. ${r.reason}`);
  }

  function tick() {
    const view = page.view;
    const time = clock.querySelector(".time");
    if (!view || !page.conn) return;
    if (view.ended || view.deadline === null || view.deadline === undefined) {
      time.textContent = "—";
      clock.classList.remove("low");
      return;
    }
    const left = view.deadline - page.conn.serverNow();
    time.textContent = duration(left);
    clock.classList.toggle("low", left < 10000);
    if (page.board && page.board.tick) page.board.tick(page.conn.serverNow());
  }

  function addLog(text, seq) {
    logList.prepend(h("li", {}, seq ? h("span", { class: "seq" }, `#${seq} `) : null, text));
    while (logList.children.length > LOG_LIMIT) logList.lastChild.remove();
  }
}

/** Send a command and say what came of it in `feedback`, next to the control that sent
 * it: taken (with the rules' warnings), refused (the rules' reason), or an error; `about`
 * (e.g. "Round 3: ") says what it was, as the answer may come after the round moved on. */
export async function sendCommand(conn, command, feedback, about = "") {
  if (feedback) {
    feedback.className = "feedback pending";
    feedback.textContent = `${about}Sent…`;
  }
  const answer = await conn.send(command);
  if (!feedback) return answer;
  if (answer.type === "ack") {
    const warnings = answer.warnings || [];
    feedback.className = warnings.length ? "feedback warn" : "feedback ok";
    fill(feedback, about, warnings.length
      ? [h("strong", {}, "Taken, with a warning: "), warnings.join(" ")]
      : "Taken.");
    if (warnings.length) announce(`Warning: ${warnings.join(" ")}`);
  } else if (answer.type === "rejected") {
    feedback.className = "feedback error";
    fill(feedback, about, h("strong", {}, "Refused: "), answer.reason, h("span", { class: "code" }, ` (${answer.code})`));
    announce(`Refused: ${answer.reason}`);
  } else {
    feedback.className = "feedback error";
    fill(feedback, about, h("strong", {}, "Error: "), answer.message, h("span", { class: "code" }, ` (${answer.code})`));
    announce(`Error: ${answer.message}`);
  }
  return answer;
}

export { watchLink };
