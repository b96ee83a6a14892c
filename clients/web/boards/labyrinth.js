// Labyrinth (docs/rules/labyrinth.md; what a viewer sees: projections/labyrinth.py). The
// computer is the game master: the board shows what it said (public answers, and the
// private ones marked), whose turn it is, the player's belongings and health, and the
// standings; it sends the secret start choice, a new cell or a handicap's question by the
// grid, and a move as text (typed, or written by the move builder's buttons), skip,
// status, recall, break and vote. The grid is the player's own notebook: what it believes
// about each cell (its type, walls, treasures ...), kept in this browser's localStorage
// for the match and seat, and never sent. Once the match is over (or for a full viewer)
// the plan itself is drawn, with every player where it ended.

import { duration, fill, h } from "../ui.js";

const SVG = "http://www.w3.org/2000/svg";
const DIRS = ["up", "right", "down", "left"];
const ARROW = { up: "↑", right: "→", down: "↓", left: "←" };
const OFFSET = { up: [-1, 0], right: [0, 1], down: [1, 0], left: [0, -1] };
const KEY_DIR = { ArrowUp: "up", ArrowRight: "right", ArrowDown: "down", ArrowLeft: "left" };

// What a player may note about a cell: a type (the letters of the plan's text format),
// or "?" for a cell it is unsure of.
const NOTE_TYPES = [
  { code: "", name: "no note", key: null },
  { code: ".", name: "land", key: "l" },
  { code: "H", name: "hospital", key: "h" },
  { code: "W", name: "weaponry", key: "w" },
  { code: "E", name: "encephalitis", key: "e" },
  { code: "P", name: "pit", key: "p" },
  { code: "R", name: "river", key: "r" },
  { code: "D", name: "delta", key: "d" },
  { code: "?", name: "unsure", key: "?" },
];
const NOTE_NAME = Object.fromEntries(NOTE_TYPES.map((t) => [t.code, t.name]));
const NOTE_FLAGS = [
  { flag: "treasure", name: "treasure", key: "t", mark: "$" },
  { flag: "items", name: "items", key: "i", mark: "+" },
  { flag: "exit", name: "exit", key: "x", mark: "⇱" },
  { flag: "danger", name: "danger (mine, mite, player)", key: "!", mark: "!" },
];

// The plan's colours and symbols, as domain/games/labyrinth/pictures.py draws them.
const FILL = {
  land: "#f1e4c3", hospital: "#fbe1e4", weaponry: "#b7c3cf", encephalitis: "#b9dc8c",
  pit: "#6b4a33", river: "#9fd0f5", delta: "#3d7fc4",
};
const PLAYER_COLOURS = ["#d62728", "#9467bd", "#17becf", "#ff7f0e", "#2ca02c"];

const ACTS = {
  open: "The game master opens the game",
  move: "moves",
  start: "chooses a start cell",
  drawn: "did not choose a start cell in time",
  order: "orders a new cell",
  ask: "asks the type of a cell",
  break: "takes a break",
  vote: "votes",
  missed: "did not move in time",
};

/** What a resolved command was, in words: a move, or the free questions a move command
 * may also carry (status, recall), or a skip. */
function actWords(event) {
  if (event.act !== "move") return ACTS[event.act] || event.act;
  const keys = (event.said || []).map((e) => e.key);
  if (keys.includes("status")) return "asks for its status";
  if (keys.includes("recall") || keys.includes("recall_none")) return "asks to recall a move";
  if (keys.includes("skip")) return "skips";
  return ACTS.move;
}

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== null && v !== undefined && v !== false) el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const cellKey = (cell) => `${cell[0]},${cell[1]}`;
const parseKey = (key) => key.split(",").map(Number);

/** "Player 2 (Bob)": the game master numbers players from 1; seat 1 is player 2. */
export function playerName(view, seat) {
  if (seat === null || seat === undefined) return "nobody";
  const s = view.seats && view.seats[seat];
  return s && s.name ? `Player ${seat + 1} (${s.name})` : `Player ${seat + 1}`;
}

function numberWord(n, word) {
  return `${n === 0 ? "no" : n} ${word}${n === 1 ? "" : "s"}`;
}

/** The column a refusal names ("column 9: ...") in the text that was sent, or null. */
export function refusedColumn(reason) {
  const m = /^column (\d+):/.exec(reason || "");
  return m ? Number(m[1]) : null;
}

// --- the move builder: the rule book's vocabulary (domain/games/labyrinth/moves.py) -------

const ONE_OF_A_KIND = new Set(["treasure", "landmine", "corpse"]);

function things(item, count) {
  if (count === 1) return `${ONE_OF_A_KIND.has(item) ? "the" : "a"} ${item}`;
  return `${count} ${item}s`;
}

/** The text of one action of the builder, as the rule book says it. */
export function actionText(a) {
  switch (a.type) {
    case "shoot": return a.player ? `shoot ${a.direction} at player ${a.player} on ${a.cell}` : `shoot ${a.direction}`;
    case "blow": return `blow the ${a.direction} wall`;
    case "leave": return `leave ${things(a.item, a.count)}`;
    case "throw": return `throw ${things(a.item, a.count)} ${a.direction}`;
    case "set_mine": return a.direction ? `set the mine ${a.direction}` : "set the mine";
    case "take": return a.which === "old" ? "keep the old treasure" : `take the ${a.which} treasure`;
    default: return "";
  }
}

// The conditions of 6.5, as the rule book says them after "if I".
const CONDITIONS = [
  ["treasure", "find a treasure"], ["bullet", "find a bullet"], ["grenade", "find a grenade"],
  ["landmine", "find a landmine"], ["corpse", "find a corpse"], ["pit", "fall into a pit"],
  ["river", "walk into a river"], ["delta", "walk into a delta"], ["hospital", "walk into a hospital"],
  ["weaponry", "walk into a weaponry"], ["land", "walk onto land"], ["wall", "hit a wall"],
];
const CONDITION_TEXT = Object.fromEntries(CONDITIONS);

/** The move the builder holds, as text ("blow the up wall, go up, shoot left; if I find
 * a treasure, shoot up"). */
export function composeMove(draft) {
  const parts = [...draft.before.map(actionText)];
  if (draft.go) parts.push(draft.go === "flow" || draft.go === "loop" ? `go by the ${draft.go}` : `go ${draft.go}`);
  parts.push(...draft.after.map(actionText));
  let text = parts.join(", ");
  for (const w of draft.when || []) text += `; if I ${CONDITION_TEXT[w.if]}, ${w.then.map(actionText).join(", ")}`;
  if (draft.report === "dark") text += "; don't tell the result";
  if (draft.report === "semi") text += "; don't tell where I end up but tell me if I hit a wall";
  return text;
}

// --- notes kept in the browser ------------------------------------------------------------------

function notesKey(match, seat) {
  return `daedalus.labyrinth.notes.${match}.${seat === null || seat === undefined ? "watching" : `seat${seat}`}`;
}

function loadNotes(key) {
  try {
    const raw = localStorage.getItem(key);
    const notes = raw ? JSON.parse(raw) : null;
    if (notes && typeof notes === "object" && notes.cells) return notes;
  } catch {
    // unreadable: start again
  }
  return { cells: {}, here: null };
}

export default {
  title: "Labyrinth",

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state;
    if (!gs || gs.phase === "over") return "";
    const me = view.you;
    const mine = me !== null && me !== undefined && gs.to_act === me;
    if (gs.phase === "start") {
      if (mine) {
        return gs.me && gs.me.asks > 0
          ? `Your turn: ask the type of ${numberWord(gs.me.asks, "cell")} or choose your start cell, in secret.`
          : "Your turn: choose your start cell, in secret (select a cell of the grid, then “Start on” it).";
      }
      return `Waiting for ${playerName(view, gs.to_act)} to choose a start cell.`;
    }
    if (mine) {
      if (gs.me && gs.me.may_order) return `Round ${gs.round}: your move. You are wounded and may first order a new cell.`;
      if (gs.me && gs.me.outside) return `Round ${gs.round}: your move. You are outside: come back in through the exit you left by.`;
      return `Round ${gs.round}: your move.`;
    }
    return `Round ${gs.round}: waiting for ${playerName(view, gs.to_act)}'s move.`;
  },

  describe(event, view) {
    if (event.type !== "resolved") return null;
    const who = event.seat === null || event.seat === undefined ? "" : `${playerName(view, event.seat)} `;
    const said = (event.said || []).map((e) => e.text).join(" ");
    return `${who}${actWords(event)}${said ? `: ${said}` : "."}`;
  },
};

class Board {
  constructor(root, ctx) {
    this.ctx = ctx;
    this.view = null;
    this.cursor = null; // [row, column] of the cell selected on the grid
    this.transcript = []; // what the game master said, oldest first
    this.draft = { before: [], go: null, after: [], when: [], report: "full" };
    this.notes = { cells: {}, here: null };
    this.notesStore = null;

    // the grid
    this.grid = s("svg", {
      class: "lab-grid", role: "application", tabindex: "0",
      "aria-label": "the labyrinth's grid: your notes", "aria-describedby": "lab-grid-help lab-cursor",
    });
    this.grid.addEventListener("keydown", (e) => this.key(e));
    this.grid.addEventListener("click", (e) => this.click(e));
    this.gridHelp = h("details", { class: "hint lab-help" }, h("summary", {}, "How to use the grid"), h("p", { id: "lab-grid-help" },
      "Select a cell by clicking it, or with the arrow keys on the grid. On the grid: Shift with an arrow notes a wall on that side; ",
      "L H W E P R D ? note the cell's type (R again turns the river's flow); T treasure, I items, X exit, ! danger; ",
      "M “I am here”; Delete clears the note; Enter does the cell's action (choose the start, order, ask). ",
      "Red letters are what the game master told you alone: S your start, N a new cell, ? a cell type you asked, ✗ a start refused. ",
      "Your notes stay in this browser and are never sent."));
    this.cursorText = h("p", { id: "lab-cursor", class: "lab-cursor", "aria-live": "polite" });
    this.cellPanel = h("div", { class: "lab-cell-panel" });
    this.cellFeedback = h("p", { class: "feedback", id: "lab-cell-feedback", role: "status" });
    this.known = h("div", { class: "lab-known" });

    // the move
    this.input = h("input", {
      id: "lab-move", type: "text", autocomplete: "off", spellcheck: "false",
      placeholder: "go left, shoot up", "aria-describedby": "lab-move-help lab-move-feedback",
    });
    this.sendButton = h("button", { type: "submit", class: "primary" }, "Send move");
    this.moveFeedback = h("p", { class: "feedback", id: "lab-move-feedback", role: "status" });
    this.caret = h("pre", { class: "lab-caret", id: "lab-caret", hidden: true });
    this.answer = h("p", { class: "lab-answer", id: "lab-answer", hidden: true });
    this.moveForm = h("form", { class: "lab-move-form", "aria-label": "your move" },
      h("label", { for: "lab-move" }, "Your move, as text"),
      h("div", { class: "lab-move-line" }, this.input, this.sendButton));
    this.moveForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.sendMove(this.input.value.trim());
    });
    this.input.addEventListener("input", () => {
      this.caret.hidden = true;
    });
    // the moves sent before, back with the up and down arrows (as in a terminal)
    this.history = [];
    this.input.addEventListener("keydown", (e) => {
      if ((e.key !== "ArrowUp" && e.key !== "ArrowDown") || !this.history.length) return;
      e.preventDefault();
      const at = this.historyAt === undefined ? this.history.length : this.historyAt;
      this.historyAt = Math.max(0, Math.min(this.history.length, at + (e.key === "ArrowUp" ? -1 : 1)));
      this.input.value = this.history[this.historyAt] || "";
    });
    this.builder = h("div", { class: "lab-builder" });
    this.quick = h("div", { class: "lab-quick" });
    this.moveCard = h("section", { class: "card lab-move", "aria-labelledby": "lab-move-h" },
      h("h2", { id: "lab-move-h" }, "Your move"),
      h("p", { class: "hint", id: "lab-move-help" },
        "Write it as the rule book does: “go left, shoot up”, “blow the up wall, then go up”, ",
        "“go right; if I find a treasure, shoot up”, “go by the flow”, “go right, don't tell the result”, ",
        "or build it with the buttons below, which write it into the box. ",
        "In the box, the up and down arrows bring back the moves you sent."),
      this.moveForm, this.moveFeedback, this.caret, this.answer, this.builder, this.quick);

    this.status = h("p", { class: "lab-status", "aria-live": "off" });
    this.planCard = h("section", { class: "card lab-plan", "aria-labelledby": "lab-plan-h", hidden: true });
    this.notesCard = h("section", { class: "card lab-notes", "aria-labelledby": "lab-notes-h" },
      h("h2", { id: "lab-notes-h" }, "Your notes on the labyrinth"),
      h("div", { class: "lab-grid-wrap" }, this.grid), this.cursorText, this.gridHelp, this.known, this.cellPanel, this.cellFeedback);
    this.meCard = h("section", { class: "card lab-me", "aria-labelledby": "lab-me-h" });
    this.playersCard = h("section", { class: "card lab-players", "aria-labelledby": "lab-players-h" });
    this.transcriptList = h("ol", { class: "lab-transcript", "aria-label": "what the game master said" });
    this.transcriptCard = h("section", { class: "card lab-said", "aria-labelledby": "lab-said-h" },
      h("h2", { id: "lab-said-h" }, "The game master"), this.transcriptList);
    fill(root, h("div", { class: "lab" },
      h("div", { class: "lab-main" }, this.status, this.planCard, this.notesCard, this.moveCard),
      h("div", { class: "lab-side" }, this.meCard, this.playersCard, this.transcriptCard)));
    this.makeBuilder();
    this.renderBuilder();
  }

  get gs() {
    return this.view ? this.view.game_state : null;
  }

  get me() {
    return this.view && this.view.you !== null && this.view.you !== undefined ? this.view.you : null;
  }

  get playing() {
    return this.me !== null && !this.ctx.readonly && this.view && !this.view.ended;
  }

  get myTurn() {
    return this.playing && this.gs && this.gs.to_act === this.me;
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    const gs = view.game_state;
    if (!gs) return;
    if (!this.notesStore) {
      this.notesStore = notesKey(view.match, this.me);
      this.notes = loadNotes(this.notesStore);
    }
    if (this.cursor === null) this.cursor = gs.shape[0];
    if (this.phase !== undefined && this.phase !== gs.phase) fill(this.cellFeedback); // said of the phase before
    this.phase = gs.phase;
    // A replay steps back and forth: its transcript is the update shown; a live page
    // gets each update once, in order, and keeps them all.
    if (ctx.readonly) this.transcript = [];
    for (const event of events) {
      if (event.type === "resolved") this.transcript.push(event);
    }
    const focused = document.activeElement && document.activeElement.id;
    this.renderStatus();
    this.renderPlan();
    this.renderGrid();
    // a note being typed is not lost to an update
    if (!(this.cellPanel.contains(document.activeElement) && document.activeElement.type === "text")) this.renderCellPanel();
    this.renderKnown();
    this.renderMove();
    this.renderBuilder();
    this.renderMe();
    this.renderPlayers();
    this.renderTranscript(events);
    if (focused) {
      const again = document.getElementById(focused);
      if (again && again !== document.activeElement) again.focus();
    }
  }

  tick(now) {
    this.now = now;
    const left = this.status.querySelector(".lab-left");
    const gs = this.gs;
    if (left && gs && gs.deadline && !this.ctx.readonly) left.textContent = duration(gs.deadline - now);
  }

  // --- status -----------------------------------------------------------------------------

  renderStatus() {
    const gs = this.gs;
    const view = this.view;
    const parts = [];
    if (gs.phase === "start") parts.push(h("span", {}, h("strong", {}, "Start"), ": choosing start cells"));
    else if (gs.phase === "play") parts.push(h("span", {}, h("span", { class: "label" }, "Round "), h("strong", {}, gs.round)));
    else parts.push(h("span", {}, h("strong", {}, "Over")));
    if (gs.phase !== "over" && gs.to_act !== null) {
      parts.push(h("span", { class: gs.to_act === this.me ? "lab-turn mine" : "lab-turn" },
        gs.to_act === this.me ? "Your turn" : `${playerName(view, gs.to_act)} to ${gs.phase === "start" ? "choose" : "play"}`,
        gs.deadline && !this.ctx.readonly ? [" — ", h("span", { class: "lab-left" }, duration(gs.deadline - (this.now || Date.now()))), " left"] : null));
    }
    if (gs.phase === "play") {
      parts.push(h("span", { class: "label" }, `Rounds without a change: ${gs.quiet} of ${gs.nstop}`));
    }
    if (gs.outcome) {
      parts.push(h("strong", {}, gs.outcome.winner === null ? "A draw" : `${playerName(view, gs.outcome.winner)} won`));
    }
    fill(this.status, parts);
  }

  // --- the notes grid -----------------------------------------------------------------------

  saveNotes() {
    try {
      localStorage.setItem(this.notesStore, JSON.stringify(this.notes));
    } catch {
      // private mode, or full: the notes last as long as the page
    }
  }

  note(cell) {
    return this.notes.cells[cellKey(cell)] || {};
  }

  editNote(cell, change) {
    this.changeNote(cell, change);
    this.notesChanged();
  }

  changeNote(cell, change) {
    const key = cellKey(cell);
    const note = { ...(this.notes.cells[key] || {}) };
    change(note);
    const empty = !note.type && !note.text && !DIRS.some((d) => note[`wall_${d}`]) && !NOTE_FLAGS.some((f) => note[f.flag]);
    if (empty) delete this.notes.cells[key];
    else this.notes.cells[key] = note;
  }

  /** A wall noted (or not) on a side of `cell`: on the neighbour's side too, one wall. */
  setWall(cell, dir, value) {
    this.changeNote(cell, (n) => {
      if (value) n[`wall_${dir}`] = true;
      else delete n[`wall_${dir}`];
    });
    const next = [cell[0] + OFFSET[dir][0], cell[1] + OFFSET[dir][1]];
    const back = { up: "down", down: "up", left: "right", right: "left" }[dir];
    if (this.inShape(next)) {
      this.changeNote(next, (n) => {
        if (value) n[`wall_${back}`] = true;
        else delete n[`wall_${back}`];
      });
    }
    this.notesChanged();
  }

  /** Save the notes and draw them again, the focus kept where it was. */
  notesChanged() {
    this.saveNotes();
    const focused = document.activeElement && document.activeElement.id;
    this.renderGrid();
    this.renderCellPanel();
    if (focused) {
      const again = document.getElementById(focused);
      if (again && again !== document.activeElement) again.focus();
    }
  }

  inShape(cell) {
    return this.gs.shape.some((c) => c[0] === cell[0] && c[1] === cell[1]);
  }

  /** What the server told this player about cells: its start, new cells, asked types. */
  facts() {
    const gs = this.gs;
    const facts = {};
    const add = (key, text, mark) => {
      (facts[key] = facts[key] || []).push(text);
      facts[key].mark = mark;
    };
    const me = gs.me;
    if (!me) return facts;
    let choice = null; // a start told, which a rejection may take back
    for (const e of me.told || []) {
      if (e.key === "start_cell") choice = e.args.cell;
      if (e.key === "start_rejected" && choice) {
        add(choice, "refused as your start", "✗");
        choice = null;
      }
      if (e.key === "new_cell") add(e.args.cell, "you continued from here", "N");
      if (e.key === "cell_type") add(e.args.cell, `the game master said: ${e.args.where}`, "?");
    }
    if (choice) add(choice, gs.phase === "start" ? "your start choice" : "you started here", "S");
    return facts;
  }

  cellWords(cell) {
    const note = this.note(cell);
    const bits = [];
    if (note.type) bits.push(note.type === "R" && note.flow ? `river flowing ${note.flow}` : NOTE_NAME[note.type]);
    const walls = DIRS.filter((d) => note[`wall_${d}`]);
    if (walls.length) bits.push(`walls ${walls.join(", ")}`);
    for (const f of NOTE_FLAGS) if (note[f.flag]) bits.push(f.name);
    if (note.text) bits.push(`“${note.text}”`);
    if (this.notes.here === cellKey(cell)) bits.push("you think you are here");
    const facts = this.facts()[cellKey(cell)] || [];
    return `Cell ${cellKey(cell)}: ${bits.length ? `your notes: ${bits.join("; ")}` : "no notes"}${facts.length ? `; ${facts.join("; ")}` : ""}.`;
  }

  renderGrid() {
    const gs = this.gs;
    const C = 56;
    const P = 26;
    const width = 2 * P + gs.columns * C;
    const height = 2 * P + gs.rows * C;
    this.grid.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const x = (c) => P + (c - 1) * C;
    const y = (r) => P + (r - 1) * C;
    const parts = [];
    for (let c = 1; c <= gs.columns; c += 1) parts.push(s("text", { class: "lab-coord", x: x(c) + C / 2, y: P - 8 }, c));
    for (let r = 1; r <= gs.rows; r += 1) parts.push(s("text", { class: "lab-coord", x: P - 10, y: y(r) + C / 2 + 4 }, r));
    const facts = this.facts();
    const walls = new Set(); // a wall between two cells is noted on both: drawn once
    for (const cell of gs.shape) {
      const [r, c] = cell;
      const key = cellKey(cell);
      const note = this.note(cell);
      const known = facts[key] || [];
      const cls = ["lab-cell"];
      if (note.type) cls.push("noted");
      if (known.some((f) => f.startsWith("refused"))) cls.push("refused");
      parts.push(s("rect", { class: cls.join(" "), "data-cell": key, x: x(c), y: y(r), width: C, height: C },
        s("title", {}, this.cellWords(cell))));
      if (note.type) {
        const code = note.type === "R" && note.flow ? ARROW[note.flow] : note.type;
        parts.push(s("text", { class: "lab-note-type", x: x(c) + C / 2, y: y(r) + C / 2 + 8 }, code));
      }
      const marks = NOTE_FLAGS.filter((f) => note[f.flag]).map((f) => f.mark).join("");
      if (marks) parts.push(s("text", { class: "lab-note-flags", x: x(c) + C - 4, y: y(r) + 14 }, marks));
      if (note.text) parts.push(s("text", { class: "lab-note-text", x: x(c) + 3, y: y(r) + C - 5 }, note.text.slice(0, 6)));
      for (const d of DIRS) {
        if (!note[`wall_${d}`]) continue;
        const [x1, y1, x2, y2] = {
          up: [x(c), y(r), x(c) + C, y(r)], down: [x(c), y(r) + C, x(c) + C, y(r) + C],
          left: [x(c), y(r), x(c), y(r) + C], right: [x(c) + C, y(r), x(c) + C, y(r) + C],
        }[d];
        if (walls.has(`${x1},${y1},${x2},${y2}`)) continue;
        walls.add(`${x1},${y1},${x2},${y2}`);
        parts.push(s("line", { class: "lab-note-wall", x1, y1, x2, y2 }));
      }
      if (known.length) parts.push(s("text", { class: "lab-fact", x: x(c) + C - 5, y: y(r) + C - 5 }, known.mark));
      if (this.notes.here === key) {
        parts.push(s("circle", { class: "lab-here", cx: x(c) + C / 2, cy: y(r) + C / 2, r: C * 0.38 }));
      }
    }
    if (this.cursor) {
      const [r, c] = this.cursor;
      parts.push(s("rect", { class: "lab-cursor-box", x: x(c) + 2, y: y(r) + 2, width: C - 4, height: C - 4 }));
    }
    this.grid.replaceChildren(...parts);
    this.cursorText.textContent = this.cursor ? this.cellWords(this.cursor) : "";
  }

  select(cell) {
    this.cursor = cell;
    this.renderGrid();
    this.renderCellPanel();
  }

  click(event) {
    const rect = event.target.closest ? event.target.closest("[data-cell]") : null;
    if (!rect) return;
    this.select(parseKey(rect.dataset.cell));
    this.grid.focus();
  }

  key(event) {
    if (!this.cursor) return;
    const dir = KEY_DIR[event.key];
    if (dir && event.shiftKey) {
      event.preventDefault();
      this.setWall(this.cursor, dir, !this.note(this.cursor)[`wall_${dir}`]);
      return;
    }
    if (dir) {
      event.preventDefault();
      // to the next cell of the shape that way (a shape may leave cells out)
      let [r, c] = this.cursor;
      for (let i = 0; i < Math.max(this.gs.rows, this.gs.columns); i += 1) {
        r += OFFSET[dir][0];
        c += OFFSET[dir][1];
        if (this.inShape([r, c])) {
          this.select([r, c]);
          return;
        }
      }
      return;
    }
    const k = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const type = NOTE_TYPES.find((t) => t.key === k);
    if (type) {
      event.preventDefault();
      this.editNote(this.cursor, (n) => {
        if (type.code === "R" && n.type === "R") {
          n.flow = DIRS[(DIRS.indexOf(n.flow) + 1) % DIRS.length]; // R again: the flow turns
        } else {
          n.type = n.type === type.code && type.code !== "R" ? "" : type.code;
          if (type.code !== "R") delete n.flow;
        }
      });
      return;
    }
    const flag = NOTE_FLAGS.find((f) => f.key === k);
    if (flag) {
      event.preventDefault();
      this.editNote(this.cursor, (n) => {
        n[flag.flag] = !n[flag.flag];
      });
      return;
    }
    if (k === "m") {
      event.preventDefault();
      this.setHere(this.cursor);
      return;
    }
    if (event.key === "Delete" || event.key === "Backspace") {
      event.preventDefault();
      this.clearNote(this.cursor);
      return;
    }
    if (event.key === "Enter" || event.key === " ") {
      const action = this.cellActions()[0];
      if (action) {
        event.preventDefault();
        action.run();
      }
    }
  }

  setHere(cell) {
    const key = cellKey(cell);
    this.notes.here = this.notes.here === key ? null : key;
    this.notesChanged();
  }

  clearNote(cell) {
    delete this.notes.cells[cellKey(cell)];
    if (this.notes.here === cellKey(cell)) this.notes.here = null;
    this.notesChanged();
  }

  /** What the selected cell can be used for now: a start, a new cell, a question. */
  cellActions() {
    const gs = this.gs;
    const me = gs && gs.me;
    const cell = this.cursor;
    if (!this.playing || !me || !cell) return [];
    const name = cellKey(cell);
    const out = [];
    if (gs.phase === "start" && this.myTurn) {
      out.push({
        label: `Start on ${name}`,
        run: () => this.ctx.send({ type: "start", cell }, this.cellFeedback, `Start on ${name}: `),
      });
    }
    if (gs.phase === "start" && me.asks > 0) {
      out.push({
        label: `Ask the type of ${name}`,
        run: () => this.ctx.send({ type: "ask", cell }, this.cellFeedback, `Asked about ${name}: `),
      });
    } else if (gs.phase === "play" && this.myTurn && (me.may_order || me.extra_orders > 0)) {
      out.push({
        label: `Order ${name} as my new cell`,
        run: () => this.ctx.send({ type: "order", cell }, this.cellFeedback, `New cell ${name}: `),
      });
    }
    return out;
  }

  renderCellPanel() {
    const cell = this.cursor;
    if (!cell) return;
    const note = this.note(cell);
    const name = cellKey(cell);
    const typeButtons = NOTE_TYPES.map((t) => h("button", {
      type: "button", class: "small lab-type", id: `lab-type-${t.name.split(" ")[0]}`, "aria-pressed": String((note.type || "") === t.code),
      onclick: () => this.editNote(cell, (n) => {
        n.type = t.code;
        if (t.code !== "R") delete n.flow;
      }),
    }, t.code && t.code !== "." ? `${t.code} ${t.name}` : t.name));
    const flowSelect = note.type === "R" ? h("select", {
      id: "lab-note-flow", "aria-label": `the flow of the river at ${name}`,
      onchange: (e) => this.editNote(cell, (n) => {
        n.flow = e.target.value || undefined;
      }),
    }, h("option", { value: "" }, "flow unknown"), DIRS.map((d) => h("option", { value: d, selected: note.flow === d }, `flows ${d} ${ARROW[d]}`))) : null;
    const check = (id, label, checked, change) => h("label", { class: "lab-check", for: id },
      h("input", { type: "checkbox", id, checked, onchange: (e) => change(e.target.checked) }), label);
    const walls = DIRS.map((d) => check(`lab-wall-${d}`, `wall ${d}`, !!note[`wall_${d}`],
      (v) => this.setWall(cell, d, v)));
    const flags = NOTE_FLAGS.map((f) => check(`lab-flag-${f.flag}`, f.name, !!note[f.flag],
      (v) => this.editNote(cell, (n) => { n[f.flag] = v; })));
    const text = h("input", {
      type: "text", id: "lab-note-text", maxlength: 40, value: note.text || "", placeholder: "a word of your own",
      onchange: (e) => this.editNote(cell, (n) => { n.text = e.target.value.trim(); }),
    });
    const actions = this.cellActions();
    const extra = [];
    const gs = this.gs;
    if (this.myTurn && gs.phase === "play" && gs.me && gs.me.may_order) {
      extra.push(h("button", {
        type: "button", onclick: () => this.ctx.send({ type: "order", cell: null }, this.cellFeedback, "No new cell: "),
      }, "Keep my cell"));
    }
    fill(this.cellPanel,
      h("h3", {}, `Cell ${name}`),
      actions.length || extra.length ? h("div", { class: "actions lab-cell-actions" },
        actions.map((a) => h("button", { type: "button", class: "primary", onclick: a.run }, a.label)), extra) : null,
      h("details", { class: "lab-note-editor", open: this.editorOpen ?? window.innerWidth > 760, ontoggle: (e) => { this.editorOpen = e.target.open; } },
        h("summary", {}, `Your notes on ${name}`),
        h("div", { class: "lab-types", role: "group", "aria-label": `what you think ${name} is` }, typeButtons, flowSelect),
        h("div", { class: "lab-checks", role: "group", "aria-label": `walls you think ${name} has` }, walls),
        h("div", { class: "lab-checks", role: "group", "aria-label": `what you think lies at ${name}` }, flags),
        h("div", { class: "row" }, h("label", { for: "lab-note-text" }, "Note"), text),
        h("div", { class: "actions" },
          h("button", { type: "button", class: "small", id: "lab-here", "aria-pressed": String(this.notes.here === name), onclick: () => this.setHere(cell) },
            "I think I am here"),
          h("button", { type: "button", class: "small", id: "lab-clear-note", onclick: () => this.clearNote(cell) }, "Clear this cell's notes"))));
  }

  renderKnown() {
    const gs = this.gs;
    const me = gs.me;
    if (!me) {
      fill(this.known);
      return;
    }
    const lines = [];
    if (gs.phase === "start") {
      if (me.chosen) lines.push(`Your start choice: ${cellKey(me.chosen)}.`);
      if (me.refused.length) lines.push(`Refused (no reason is given): ${me.refused.map(cellKey).join(", ")}.`);
      if (me.asks > 0) lines.push(`You may ask the type of ${numberWord(me.asks, "more cell")} (option 7.2).`);
      if (me.asked.length) lines.push(`Cells asked: ${me.asked.map(cellKey).join(", ")}; your start is one of them.`);
    }
    const told = (me.told || []).filter((e) => ["start_cell", "start_rejected", "new_cell", "cell_type"].includes(e.key));
    if (told.length) lines.push(`Told to you alone: ${told.map((e) => e.text).join("; ")}.`);
    fill(this.known, lines.map((l) => h("p", { class: "hint" }, l)));
  }

  // --- the move -------------------------------------------------------------------------------

  async sendMove(text) {
    if (!text) {
      this.moveFeedback.className = "feedback error";
      this.moveFeedback.textContent = "Write a move first (or build it with the buttons).";
      return;
    }
    this.caret.hidden = true;
    if (this.history[this.history.length - 1] !== text) this.history.push(text);
    this.historyAt = undefined;
    const answer = await this.ctx.send({ type: "move", move: text }, this.moveFeedback, `“${text}”: `);
    if (answer && answer.type === "rejected") {
      const column = refusedColumn(answer.reason);
      if (column !== null) {
        // the text as sent, and a mark under the column where it stops being a move
        fill(this.caret, text, "\n", " ".repeat(Math.max(0, column - 1)), "^ ", answer.reason.replace(/^column \d+: /, ""));
        this.caret.hidden = false;
        this.caret.setAttribute("aria-label", `The move stops being one at column ${column}: ${text.slice(column - 1)}`);
      }
      this.input.focus();
    } else if (answer && answer.type === "ack" && !["status", "skip"].includes(text) && !/^recall /.test(text)) {
      this.input.value = "";
      this.draft = { before: [], go: null, after: [], when: [], report: "full" };
      this.renderBuilder();
    }
  }

  writeDraft() {
    this.input.value = composeMove(this.draft);
    this.caret.hidden = true;
    this.renderBuilder();
  }

  /** The move builder's controls, made once (what is chosen in them stays chosen). */
  makeBuilder() {
    this.goButtons = [...DIRS, "flow", "loop"].map((g) => h("button", {
      type: "button", class: "small lab-go", id: `lab-go-${g}`, "aria-pressed": "false",
      onclick: () => {
        this.draft.go = this.draft.go === g ? null : g;
        this.writeDraft();
      },
    }, g === "flow" || g === "loop" ? `go by the ${g}` : `go ${g} ${ARROW[g]}`));
    const kind = h("select", { id: "lab-act-kind" },
      h("option", { value: "shoot" }, "shoot"),
      h("option", { value: "blow" }, "blow the wall (a grenade)"),
      h("option", { value: "leave" }, "leave an item"),
      h("option", { value: "throw" }, "throw an item"),
      h("option", { value: "set_mine" }, "set the mine"),
      h("option", { value: "take" }, "choose a treasure"));
    const direction = h("select", { id: "lab-act-dir" },
      h("option", { value: "" }, "none (set the mine here)"),
      DIRS.map((d) => h("option", { value: d, selected: d === "up" }, d)));
    const item = h("select", { id: "lab-act-item" }, ["bullet", "grenade", "landmine", "treasure", "corpse"].map((i) => h("option", { value: i }, i)));
    const count = h("input", { id: "lab-act-count", type: "number", min: 1, max: 3, value: 1 });
    const which = h("select", { id: "lab-act-which" },
      [["new", "the new (topmost) treasure"], ["lowest", "the lowest treasure"], ["second lowest", "the second lowest treasure"],
        ["third lowest", "the third lowest treasure"], ["old", "keep the old treasure"]].map(([v, t]) => h("option", { value: v }, t)));
    const target = h("select", { id: "lab-act-target" });
    const targetCell = h("input", { id: "lab-act-cell", type: "text", size: 5, placeholder: "3,4", autocomplete: "off" });
    this.targetSelect = target;
    const feedback = h("p", { class: "feedback", id: "lab-builder-feedback", role: "status" });
    // only the fields the chosen action uses are shown
    const rows = {
      dir: h("div", { class: "row" }, h("label", { for: "lab-act-dir" }, "Direction"), direction),
      item: h("div", { class: "row" }, h("label", { for: "lab-act-item" }, "Item"), item,
        h("label", { for: "lab-act-count", class: "label" }, "how many"), count),
      which: h("div", { class: "row" }, h("label", { for: "lab-act-which" }, "Treasure"), which),
      target: h("div", { class: "row" }, h("label", { for: "lab-act-target" }, "Target (7.3)"), target,
        h("label", { for: "lab-act-cell", class: "label" }, "on the cell"), targetCell),
    };
    const showRows = () => {
      const k = kind.value;
      rows.target.hidden = k !== "shoot" || !(this.view && this.view.options && this.view.options.named_target);
      rows.dir.hidden = k === "leave" || k === "take";
      rows.item.hidden = k !== "leave" && k !== "throw";
      rows.which.hidden = k !== "take";
    };
    kind.addEventListener("change", showRows);
    this.showActionRows = showRows;
    showRows();
    const build = () => {
      const type = kind.value;
      const d = direction.value;
      if ((type === "shoot" || type === "blow" || type === "throw") && !d) {
        feedback.className = "feedback error";
        feedback.textContent = `To ${type === "blow" ? "blow a wall" : type}, choose a direction.`;
        return null;
      }
      feedback.className = "feedback";
      feedback.textContent = "";
      const a = { type };
      if (type === "shoot" || type === "blow" || type === "throw" || (type === "set_mine" && d)) a.direction = d;
      if (type === "leave" || type === "throw") {
        a.item = item.value;
        a.count = ONE_OF_A_KIND.has(item.value) ? 1 : Math.max(1, Math.min(3, Number(count.value) || 1));
      }
      if (type === "take") a.which = which.value;
      if (type === "shoot" && this.view && this.view.options && this.view.options.named_target) {
        const cell = targetCell.value.trim().replace(/\s+/g, "");
        if (!/^\d+,\d+$/.test(cell)) {
          feedback.className = "feedback error";
          feedback.textContent = "This match's shots name their target: write the cell it is on, such as 3,4.";
          return null;
        }
        a.player = Number(target.value);
        a.cell = cell;
      }
      return a;
    };
    const condition = h("select", { id: "lab-act-if" }, CONDITIONS.map(([v, t]) => h("option", { value: v }, `if I ${t}`)));
    const add = (where) => {
      const a = build();
      if (!a) return;
      if (where === "when") {
        const w = this.draft.when.find((x) => x.if === condition.value);
        if (w) w.then.push(a);
        else this.draft.when.push({ if: condition.value, then: [a] });
      } else {
        this.draft[where].push(a);
      }
      this.writeDraft();
    };
    this.beforeList = h("ul", { class: "lab-actions-list", "aria-label": "actions before the movement" });
    this.afterList = h("ul", { class: "lab-actions-list", "aria-label": "actions after the movement" });
    this.whenList = h("ul", { class: "lab-actions-list", "aria-label": "actions on a condition (6.5)" });
    const report = (value, label) => {
      const input = h("input", {
        type: "radio", name: "lab-report", value, id: `lab-report-${value}`, checked: value === "full",
        onchange: () => {
          this.draft.report = value;
          this.writeDraft();
        },
      });
      return h("label", { class: "lab-check", for: `lab-report-${value}` }, input, label,
        h("span", { class: "label lab-banned" }, ""));
    };
    this.reports = { full: report("full", "everything (a normal move)"), dark: report("dark", "nothing: a dark move (6.7)"),
      semi: report("semi", "only whether I hit a wall: semi-dark (6.8)") };
    this.throwOption = kind.querySelector('option[value="throw"]');
    // open from the start on a wide screen; on a phone it would push the rest far down
    fill(this.builder, h("details", { class: "lab-build", open: window.innerWidth > 760 },
      h("summary", {}, "Build the move with buttons"),
      h("fieldset", {}, h("legend", {}, "Before the movement"), this.beforeList),
      h("fieldset", {}, h("legend", {}, "The movement (exactly one)"), h("div", { class: "actions" }, this.goButtons)),
      h("fieldset", {}, h("legend", {}, "After the movement"), this.afterList),
      this.whenBox = h("fieldset", {}, h("legend", {}, "After the movement, on a condition (6.5)"), this.whenList),
      h("fieldset", { class: "lab-act" }, h("legend", {}, "An action, before or after the movement"),
        h("div", { class: "row" }, h("label", { for: "lab-act-kind" }, "Action"), kind),
        rows.dir, rows.item, rows.which,
        h("div", { class: "actions" },
          h("button", { type: "button", id: "lab-add-before", onclick: () => add("before") }, "Add before the movement"),
          h("button", { type: "button", id: "lab-add-after", onclick: () => add("after") }, "Add after the movement")),
        this.whenRow = h("div", { class: "actions" },
          h("label", { for: "lab-act-if", class: "sr-only" }, "Condition"), condition,
          h("button", { type: "button", id: "lab-add-when", onclick: () => add("when") }, "Add on this condition")),
        feedback),
      h("fieldset", {}, h("legend", {}, "What you are told"), this.reports.full, this.reports.dark, this.reports.semi),
      h("button", {
        type: "button", class: "small", id: "lab-clear-move", onclick: () => {
          this.draft = { before: [], go: null, after: [], when: [], report: "full" };
          this.input.value = "";
          this.renderBuilder();
        },
      }, "Clear the move")));
  }

  /** The builder's lists and pressed buttons, from the draft and the match's options. */
  renderBuilder() {
    const options = (this.view && this.view.options) || {};
    const draft = this.draft;
    for (const button of this.goButtons) button.setAttribute("aria-pressed", String(button.id === `lab-go-${draft.go}`));
    const listOf = (where) => draft[where].map((a, i) => h("li", {}, actionText(a), " ", h("button", {
      type: "button", class: "small", "aria-label": `remove “${actionText(a)}”`,
      onclick: () => {
        draft[where].splice(i, 1);
        this.writeDraft();
      },
    }, "✕")));
    fill(this.beforeList, listOf("before"));
    fill(this.afterList, listOf("after"));
    fill(this.whenList, draft.when.flatMap((w, wi) => w.then.map((a, i) => h("li", {}, `if I ${CONDITION_TEXT[w.if]}: ${actionText(a)} `,
      h("button", {
        type: "button", class: "small", "aria-label": `remove “if I ${CONDITION_TEXT[w.if]}, ${actionText(a)}”`,
        onclick: () => {
          w.then.splice(i, 1);
          if (!w.then.length) draft.when.splice(wi, 1);
          this.writeDraft();
        },
      }, "✕")))));
    const conditional = options.conditional_moves !== false;
    this.whenRow.hidden = !conditional;
    this.whenBox.hidden = !conditional && !draft.when.length;
    const allowed = { full: true, dark: options.dark_moves !== false, semi: options.semi_dark_moves !== false };
    for (const [value, label] of Object.entries(this.reports)) {
      const input = label.querySelector("input");
      input.checked = draft.report === value;
      input.disabled = !allowed[value];
      label.querySelector(".lab-banned").textContent = allowed[value] ? "" : " (not allowed in this match)";
    }
    this.throwOption.disabled = options.throwing === false;
    if (this.view && this.view.game_state && this.targetSelect.options.length !== this.view.game_state.players.length) {
      fill(this.targetSelect, this.view.game_state.players.map((p) => h("option", { value: p.seat + 1 }, playerName(this.view, p.seat))));
    }
    this.showActionRows();
  }

  renderMove() {
    const gs = this.gs;
    const view = this.view;
    const me = gs.me;
    this.moveCard.hidden = !this.playing;
    if (!this.playing) return;
    const myMove = this.myTurn && gs.phase === "play";
    this.sendButton.disabled = !myMove;
    this.sendButton.title = myMove ? "" : "You may write your move now and send it on your turn.";
    const quickFeedback = this.quickFeedback || (this.quickFeedback = h("p", { class: "feedback", id: "lab-quick-feedback", role: "status" }));
    const inPlay = gs.phase === "play";
    const anyTime = gs.phase !== "over"; // status and recall are free, at any time (6.3, 6.4)
    const others = gs.players.map((p) => p.seat);
    const recallSelect = h("select", { id: "lab-recall" }, others.map((s) => h("option", { value: s + 1, selected: this.recallSeat === s + 1 }, playerName(view, s))));
    recallSelect.addEventListener("change", () => {
      this.recallSeat = Number(recallSelect.value);
    });
    const send = (command, about) => this.ctx.send(command, quickFeedback, about);
    const votes = gs.votes;
    const voted = votes && me && Object.prototype.hasOwnProperty.call(votes, String(me.seat));
    fill(this.quick,
      h("div", { class: "actions" },
        h("button", { type: "button", id: "lab-skip", disabled: !myMove, onclick: () => send({ type: "move", move: "skip" }, "Skip: ") }, "Skip my move"),
        h("button", { type: "button", id: "lab-status", disabled: !anyTime, onclick: () => send({ type: "move", move: "status" }, "Status: ") }, "Status (free)"),
        h("span", { class: "lab-recall" },
          h("label", { for: "lab-recall", class: "label" }, "Recall the last move of "), recallSelect,
          h("button", {
            type: "button", id: "lab-recall-send", disabled: !anyTime,
            onclick: () => send({ type: "move", move: `recall ${recallSelect.value}` }, "Recall: "),
          }, "Recall"))),
      h("div", { class: "actions" },
        h("button", { type: "button", id: "lab-break", disabled: !myMove, onclick: () => send({ type: "break" }, "Break: ") }, "Take a break"),
        !votes ? h("button", { type: "button", id: "lab-vote-propose", disabled: !inPlay, onclick: () => send({ type: "vote", yes: true }, "Vote: ") }, "Propose a break to the vote")
          : voted ? h("span", { class: "label" }, `You voted ${votes[String(me.seat)] ? "yes" : "no"} on the break.`)
            : [h("span", {}, "A break is put to the vote: "),
              h("button", { type: "button", id: "lab-vote-yes", onclick: () => send({ type: "vote", yes: true }, "Vote: ") }, "Vote yes"),
              h("button", { type: "button", id: "lab-vote-no", onclick: () => send({ type: "vote", yes: false }, "Vote: ") }, "Vote no")]),
      quickFeedback);
  }

  // --- the player, the players, the transcript ------------------------------------------------

  renderMe() {
    const gs = this.gs;
    const me = gs.me;
    this.meCard.hidden = !me;
    if (!me) return;
    const health = [];
    if (!me.alive) health.push("dead");
    else if (me.lost) health.push("lost");
    else {
      if (me.wounded) health.push(me.may_order ? "wounded (you may order a new cell this turn)" : "wounded");
      if (me.infected) health.push(me.heal_left === null ? "infected: find a hospital" : `infected: ${numberWord(me.heal_left, "move")} to reach a hospital`);
      if (!me.wounded && !me.infected) health.push("healthy");
      if (me.immune) health.push("immune to encephalitis");
    }
    const carries = me.carries ? `a ${me.carries}` : "nothing";
    fill(this.meCard,
      h("h2", { id: "lab-me-h" }, `You: ${playerName(this.view, me.seat)}`),
      h("dl", { class: "lab-belongings" },
        h("dt", {}, "Bullets"), h("dd", { id: "lab-bullets" }, me.bullets),
        h("dt", {}, "Grenades"), h("dd", { id: "lab-grenades" }, me.grenades),
        h("dt", {}, "Carrying"), h("dd", { id: "lab-carries" }, carries),
        h("dt", {}, "Health"), h("dd", { id: "lab-health" }, health.join(", ")),
        me.outside ? [h("dt", {}, "Where"), h("dd", {}, this.view.ended ? "outside the labyrinth" : "outside: come back in with your next move")] : null,
        h("dt", {}, "New cells"), h("dd", {}, `${me.orders} after a wound`, me.extra_orders ? `, ${me.extra_orders} without` : "")));
  }

  renderPlayers() {
    const gs = this.gs;
    const view = this.view;
    const order = gs.order.map((s) => s + 1).join(", ");
    fill(this.playersCard,
      h("h2", { id: "lab-players-h" }, "Players"),
      h("p", { class: "hint" }, `Order of play: ${order}. Moves to heal an infection: ${gs.heal_moves ?? "no limit"}; a draw after ${gs.nstop} rounds without a change.`),
      h("ul", { class: "lab-standings" }, gs.order.map((seat) => {
        const p = gs.players[seat];
        const last = p.last_move;
        return h("li", { class: seat === this.me ? "you" : "", "data-seat": seat },
          h("span", { class: "dot", style: `background:${PLAYER_COLOURS[seat % PLAYER_COLOURS.length]}`, "aria-hidden": "true" }),
          h("strong", {}, playerName(view, seat)), seat === this.me ? " (you)" : "",
          " — ", h("span", { class: `lab-standing ${p.standing}` }, p.standing),
          gs.to_act === seat && gs.phase !== "over" ? h("span", { class: "badge" }, gs.phase === "start" ? "to choose" : "to play") : null,
          (gs.breaks || []).includes(seat) ? h("span", { class: "label" }, " (had a break)") : null,
          gs.votes && Object.prototype.hasOwnProperty.call(gs.votes, String(seat)) ? h("span", { class: "label" }, ` voted ${gs.votes[String(seat)] ? "yes" : "no"}`) : null,
          h("br"),
          h("span", { class: "label" }, p.started_on ? `started on ${p.started_on}; ` : "", `${numberWord(p.moves, "move")}`),
          last ? h("div", { class: "lab-last" }, h("span", { class: "label" }, "Last move: "), h("q", {}, last.move),
            last.answers.length ? ` — ${last.answers.join("; ")}` : "") : null);
      })));
  }

  /** The game master's answer to this player's last act, next to the move box. */
  renderAnswer() {
    const me = this.me;
    const last = [...this.transcript].reverse().find((e) => e.seat === me && e.act !== "open");
    const words = last ? (last.said || []).filter((e) => !["move", "turn"].includes(e.key)).map((e) => e.text) : [];
    this.answer.hidden = me === null || !words.length;
    fill(this.answer, h("span", { class: "label" }, "The game master's answer: "), words.join("; "));
  }

  renderTranscript(events) {
    this.renderAnswer();
    const view = this.view;
    const me = this.me;
    const items = this.transcript.map((event) => {
      const who = event.seat === null || event.seat === undefined ? ACTS.open
        : `${playerName(view, event.seat)} ${actWords(event)}`;
      const body = event.cell ? ` (${cellKey(event.cell)}${event.seat === me ? ", known to you alone" : ""})`
        : event.act === "vote" ? ` ${event.yes ? "yes" : "no"}` : "";
      return h("li", { class: event.seat === me && me !== null ? "mine" : "" },
        h("div", { class: "lab-said-head" }, who, body),
        h("ul", {}, (event.said || []).map((e) => {
          const secret = e.to !== undefined;
          const mark = !secret ? null
            : e.to.length === 0 ? "told to nobody"
              : me !== null && e.to.includes(me) ? (e.to.length === 1 ? "to you alone" : "to you and others")
                : `to ${e.to.map((t) => `player ${t + 1}`).join(", ")}`;
          return h("li", { class: secret ? "private" : "" },
            mark ? h("span", { class: "lab-private" }, `🔒 ${mark}: `) : null, e.text);
        })));
    });
    const atBottom = this.transcriptList.scrollHeight - this.transcriptList.scrollTop - this.transcriptList.clientHeight < 40;
    fill(this.transcriptList, items);
    if (atBottom || events.length) this.transcriptList.scrollTop = this.transcriptList.scrollHeight;
    // a screen reader hears what the game master just said to this viewer
    const fresh = events.filter((e) => e.type === "resolved").flatMap((e) => (e.said || []).map((x) => x.text));
    if (fresh.length && !this.ctx.readonly && this.primed) this.ctx.announce(fresh.join(" "));
    this.primed = true;
  }

  // --- the plan, after the match ---------------------------------------------------------------

  renderPlan() {
    const full = this.gs.full;
    this.planCard.hidden = !full;
    if (!full) return;
    const view = this.view;
    const plan = full.plan;
    fill(this.planCard,
      h("h2", { id: "lab-plan-h" }, view.ended ? "The plan, revealed" : "The plan (full view)"),
      h("div", { class: "lab-grid-wrap" }, planPicture(plan, full, view)),
      planLegend(),
      h("ul", { class: "lab-plan-players" }, full.players.map((p) => h("li", {},
        h("span", { class: "dot", style: `background:${PLAYER_COLOURS[p.seat % PLAYER_COLOURS.length]}`, "aria-hidden": "true" }),
        `${playerName(view, p.seat)}: `,
        p.outside ? `outside, out through the ${p.outside.side} side of ${cellKey(p.outside.cell)}` : p.cell ? `at ${cellKey(p.cell)}` : "out of the labyrinth",
        `; ${!p.alive ? "dead" : p.lost ? "lost" : p.wounded ? "wounded" : p.infected ? "infected" : "healthy"}`,
        `, ${numberWord(p.bullets, "bullet")}, ${numberWord(p.grenades, "grenade")}`,
        p.carries ? `, carrying ${p.carries === "treasure" ? (full.truth[p.treasure] ? "the true treasure" : "a fake treasure") : `a ${p.carries}`}` : ""))),
      h("details", {}, h("summary", {}, "The plan as text"), h("pre", { class: "lab-plan-text" }, full.plan_text)));
  }
}

/** The plan drawn as pictures.py draws it (cell colours and symbols, walls, exits,
 * treasures, items), with the players where they are now. */
export function planPicture(plan, full, view) {
  const C = 56;
  const P = 46;
  const width = 2 * P + plan.columns * C;
  const height = 2 * P + plan.rows * C;
  const cx = (cell) => P + (cell[1] - 0.5) * C;
  const cy = (cell) => P + (cell[0] - 0.5) * C;
  const types = new Map(plan.cells.map((c) => [cellKey(c.cell), c]));
  const parts = [s("rect", { x: 0, y: 0, width, height, fill: "#ffffff" })];
  for (let c = 1; c <= plan.columns; c += 1) parts.push(s("text", { x: cx([1, c]), y: 16, class: "lab-coord" }, c));
  for (let r = 1; r <= plan.rows; r += 1) parts.push(s("text", { x: 16, y: cy([r, 1]) + 4, class: "lab-coord" }, r));
  const words = [];
  for (const c of plan.cells) {
    const [r, col] = c.cell;
    const type = c.type;
    const title = `${cellKey(c.cell)}: ${type}${type === "river" ? ` flowing ${c.flow}` : type === "pit" ? ` ${c.loop}${c.place}` : ""}`;
    parts.push(s("rect", {
      class: `cell ${type}`, "data-cell": cellKey(c.cell), x: P + (col - 1) * C, y: P + (r - 1) * C, width: C, height: C,
      fill: FILL[type] || "#fff", stroke: "#d9cfb8", "stroke-width": 1,
    }, s("title", {}, title)));
    words.push(title);
  }
  for (const c of plan.cells) parts.push(...symbol(c, cx(c.cell), cy(c.cell), C, types));
  // walls: inner ones listed, every outer side not an exit is an indestructible wall
  const line = (cell, d) => {
    const x0 = cx(cell);
    const y0 = cy(cell);
    const hh = C / 2;
    return {
      up: [x0 - hh, y0 - hh, x0 + hh, y0 - hh], down: [x0 - hh, y0 + hh, x0 + hh, y0 + hh],
      left: [x0 - hh, y0 - hh, x0 - hh, y0 + hh], right: [x0 + hh, y0 - hh, x0 + hh, y0 + hh],
    }[d];
  };
  for (const wall of plan.walls) {
    const [a, b] = wall.cells;
    const d = b[0] > a[0] ? "down" : b[0] < a[0] ? "up" : b[1] > a[1] ? "right" : "left";
    const [x1, y1, x2, y2] = line(a, d);
    parts.push(s("line", wall.destructible
      ? { class: "wall", x1, y1, x2, y2, stroke: "#7a4a21", "stroke-width": 4, "stroke-linecap": "round" }
      : { class: "solid", x1, y1, x2, y2, stroke: "#111", "stroke-width": 7, "stroke-linecap": "square" }));
  }
  const exits = new Map(plan.exits.map((e) => [`${cellKey(e.cell)} ${e.side}`, e]));
  const exitParts = [];
  for (const c of plan.cells) {
    for (const d of DIRS) {
      const n = [c.cell[0] + OFFSET[d][0], c.cell[1] + OFFSET[d][1]];
      if (types.has(cellKey(n))) continue;
      const [x1, y1, x2, y2] = line(c.cell, d);
      const exit = exits.get(`${cellKey(c.cell)} ${d}`);
      if (!exit) {
        parts.push(s("line", { class: "outer-wall", x1, y1, x2, y2, stroke: "#111", "stroke-width": 7, "stroke-linecap": "square" }));
      } else if (!exit.open) {
        exitParts.push(s("line", { class: "closed-exit", x1, y1, x2, y2, stroke: "#e07b00", "stroke-width": 7, "stroke-dasharray": "7 5" },
          s("title", {}, `closed exit: ${cellKey(c.cell)} ${d}`)));
      } else {
        const [dr, dc] = OFFSET[d];
        const hh = C / 2;
        const bx = cx(c.cell) + dc * (hh - 6);
        const by = cy(c.cell) + dr * (hh - 6);
        const tx = cx(c.cell) + dc * (hh + 20);
        const ty = cy(c.cell) + dr * (hh + 20);
        const sx = tx - dc * 12;
        const sy = ty - dr * 12;
        const px = -dr * 8;
        const py = dc * 8;
        exitParts.push(s("g", { class: "open-exit" }, s("title", {}, `open exit: ${cellKey(c.cell)} ${d}`),
          s("line", { x1: bx, y1: by, x2: sx, y2: sy, stroke: "#1d9a3c", "stroke-width": 4 }),
          s("polygon", { points: `${tx},${ty} ${sx + px},${sy + py} ${sx - px},${sy - py}`, fill: "#1d9a3c" })));
      }
    }
  }
  parts.push(...exitParts);
  // what lies on each cell now
  for (const pile of full.piles) {
    const x0 = cx(pile.cell);
    const y0 = cy(pile.cell);
    (pile.treasures || []).forEach((id, i) => {
      const real = full.truth[id];
      parts.push(s("polygon", {
        class: `treasure ${real ? "true" : "fake"}`, points: star(x0 + C * 0.28 - i * 8, y0 - C * 0.27, C * 0.19),
        fill: real ? "#ffc400" : "#ffffff", "fill-opacity": real ? 1 : 0.7, stroke: real ? "#7a5a00" : "#6d6d6d",
        "stroke-width": 1.5, "stroke-dasharray": real ? null : "3 2",
      }, s("title", {}, real ? "the true treasure" : "a fake treasure")));
    });
    const text = [[pile.bullets, "b"], [pile.grenades, "g"], [pile.landmines, "m"], [pile.armed, "M"], [(pile.corpses || []).length, "c"]]
      .filter(([n]) => n).map(([n, l]) => `${n}${l}`).join(" ");
    if (text) {
      parts.push(s("text", {
        class: "items", x: x0 - C * 0.42, y: y0 + C * 0.38, "font-size": C * 0.2, fill: "#000", stroke: "#fff",
        "stroke-width": 3, "paint-order": "stroke",
      }, text));
    }
  }
  // the players where they are
  const at = new Map();
  for (const p of full.players) {
    let x0;
    let y0;
    if (p.outside) {
      const [dr, dc] = OFFSET[p.outside.side];
      x0 = cx(p.outside.cell) + dc * C * 0.78;
      y0 = cy(p.outside.cell) + dr * C * 0.78 + (dr === 0 ? C * 0.22 : 0);
    } else if (p.cell) {
      x0 = cx(p.cell);
      y0 = cy(p.cell);
    } else continue;
    const k = `${x0},${y0}`;
    const n = at.get(k) || 0;
    at.set(k, n + 1);
    const mx = x0 - C * 0.22 + n * 16;
    const my = y0 - C * 0.22 + (n > 1 ? 16 : 0);
    const colour = PLAYER_COLOURS[p.seat % PLAYER_COLOURS.length];
    parts.push(s("g", { class: "lab-player", "data-seat": p.seat },
      s("title", {}, `${playerName(view, p.seat)}${p.alive ? "" : " (dead)"}`),
      s("circle", { cx: mx, cy: my, r: 10, fill: p.alive ? colour : "#666", stroke: "#fff", "stroke-width": 2 }),
      s("text", { x: mx, y: my + 4, "font-size": 11, fill: "#fff", "text-anchor": "middle", "font-weight": "bold" },
        p.alive ? p.seat + 1 : `✝${p.seat + 1}`)));
  }
  return s("svg", {
    class: "lab-plan-svg", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `The plan${plan.name ? ` “${plan.name}”` : ""}, ${plan.rows} rows by ${plan.columns} columns; `
      + `each cell's type is in its title, and the players are listed below`,
  }, parts);
}

/** What the plan's colours and symbols mean, in words (no colour-only meaning). */
function planLegend() {
  const swatch = (type) => h("span", { class: "lab-swatch", style: `background:${FILL[type]}`, "aria-hidden": "true" });
  return h("p", { class: "hint lab-legend" },
    swatch("land"), "land (plain) ", swatch("hospital"), "hospital (red cross) ", swatch("weaponry"), "weaponry (crossed lines) ",
    swatch("encephalitis"), "encephalitis (the mite) ", swatch("pit"), "pit (a1: pit 1 of loop a) ", swatch("river"), "river (arrow: the flow) ",
    swatch("delta"), "delta (triangle). ",
    "Thick black line: an indestructible wall; brown line: a wall; orange dashes: a closed exit; green arrow: an open exit. ",
    "Gold star: the true treasure; dashed star: a fake one; 2b 1g 1m: bullets, grenades, landmines lying there ",
    "(M: an armed landmine, c: a corpse); a numbered disc: a player (✝ dead).");
}

function star(x, y, outer) {
  const points = [];
  for (let k = 0; k < 10; k += 1) {
    const radius = k % 2 === 0 ? outer : outer * 0.45;
    const angle = -Math.PI / 2 + (k * Math.PI) / 5;
    points.push(`${(x + radius * Math.cos(angle)).toFixed(1)},${(y + radius * Math.sin(angle)).toFixed(1)}`);
  }
  return points.join(" ");
}

function symbol(c, x, y, C, types) {
  switch (c.type) {
    case "hospital": {
      const arm = C * 0.09;
      const long = C * 0.3;
      return [s("rect", { x: x - arm, y: y - long, width: 2 * arm, height: 2 * long, fill: "#d62728" }),
        s("rect", { x: x - long, y: y - arm, width: 2 * long, height: 2 * arm, fill: "#d62728" })];
    }
    case "weaponry": {
      const d = C * 0.26;
      return [s("path", { d: `M${x - d},${y - d}L${x + d},${y + d}M${x + d},${y - d}L${x - d},${y + d}`, stroke: "#33414e", "stroke-width": 5, "stroke-linecap": "round" }),
        s("circle", { cx: x, cy: y, r: C * 0.1, fill: "#33414e" })];
    }
    case "encephalitis": {
      const r = C * 0.13;
      const legs = [-r, 0, r].map((dy) => `M${x - r * 2.1},${y + dy}L${x + r * 2.1},${y - dy}`).join("");
      return [s("path", { d: legs, stroke: "#2d4a12", "stroke-width": 2 }),
        s("ellipse", { cx: x, cy: y, rx: r * 1.2, ry: r * 1.5, fill: "#2d4a12" })];
    }
    case "pit":
      return [s("circle", { cx: x, cy: y, r: C * 0.3, fill: "#2b1a0e" }),
        s("text", { x, y: y + C * 0.1, "font-size": C * 0.3, fill: "#fff", "text-anchor": "middle", "font-weight": "bold" }, `${c.loop}${c.place}`)];
    case "delta": {
      const t = C * 0.22;
      return [s("polygon", { points: `${x},${y - t} ${x + t},${y + t * 0.8} ${x - t},${y + t * 0.8}`, fill: "none", stroke: "#fff", "stroke-width": 3 })];
    }
    case "river": {
      const [dr, dc] = OFFSET[c.flow];
      const half = C / 2;
      const next = types.get(cellKey([c.cell[0] + dr, c.cell[1] + dc]));
      const reach = next && (next.type === "river" || next.type === "delta") ? C : half * 0.9;
      const hx = x + dc * half;
      const hy = y + dr * half;
      const w = C * 0.13;
      const bx = hx - dc * w * 1.4;
      const by = hy - dr * w * 1.4;
      const px = -dr * w;
      const py = dc * w;
      return [s("line", { class: "flow", x1: x, y1: y, x2: x + dc * reach, y2: y + dr * reach, stroke: "#1f5fa8", "stroke-width": 4, "stroke-linecap": "round" }),
        s("polygon", { points: `${hx + dc * w * 0.4},${hy + dr * w * 0.4} ${bx + px},${by + py} ${bx - px},${by - py}`, fill: "#1f5fa8" })];
    }
    default:
      return [];
  }
}
