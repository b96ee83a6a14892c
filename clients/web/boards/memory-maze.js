// Memory Maze (docs/rules/memory-maze.md#protocol): the grid with both pieces, the
// corners (keys) each must visit, each seat's latest attempt drawn from where it started
// (dashed when it bonked: where is secret), the colored walls, and once the match is over
// the maze itself; the clock of the edition (periods, reserve, cooldown). A move is drawn
// with the arrow keys (or WASD) on the grid, the buttons, or by clicking a cell in line
// with the end of the drawing; Enter sends it, Backspace takes a step back.

import { duration, fill, h } from "../ui.js";

const SVG = "http://www.w3.org/2000/svg";
const STEP = { U: [0, 1], D: [0, -1], L: [-1, 0], R: [1, 0] };
const WORD = { U: "up", D: "down", L: "left", R: "right" };
const KEYS = {
  ArrowUp: "U", ArrowDown: "D", ArrowLeft: "L", ArrowRight: "R",
  w: "U", s: "D", a: "L", d: "R", W: "U", S: "D", A: "L", D: "R",
};
const COLORS = ["#c0392b", "#1f5fa8"];

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function cellName(x, y) {
  return `${String.fromCharCode(97 + x)}${y + 1}`;
}

export function cellXY(name) {
  return [name.charCodeAt(0) - 97, Number(name.slice(1)) - 1];
}

/** The cells a sequence of moves passes from `from` (walls unknown: as if open). */
function trace(from, moves, size) {
  let [x, y] = cellXY(from);
  const cells = [[x, y]];
  for (const m of moves) {
    const [dx, dy] = STEP[m] || [0, 0];
    x = Math.max(0, Math.min(size - 1, x + dx));
    y = Math.max(0, Math.min(size - 1, y + dy));
    cells.push([x, y]);
  }
  return cells;
}

/** "UURDL" from whatever the server echoed ("north north east", "u u r"). */
export function letters(moves) {
  if (!moves) return "";
  const words = { up: "U", down: "D", left: "L", right: "R", north: "U", south: "D", west: "L", east: "R", n: "U", s: "D", w: "L", e: "R", u: "U", d: "D", l: "L", r: "R" };
  const tokens = moves.trim().toLowerCase().split(/[\s,]+/).filter(Boolean);
  const compass = { n: "U", s: "D", w: "L", e: "R", u: "U", d: "D", l: "L", r: "R" };
  return tokens.map((t) => (t.length > 1 && words[t]) || Array.from(t, (c) => compass[c] || "").join("")).join("");
}

export default {
  title: "Memory Maze",

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state;
    if (!gs || gs.over) return "";
    const me = view.you;
    if (gs.turns) {
      const who = gs.to_move === me ? "your move" : `${gs.seats[gs.to_move].name}'s move`;
      return `Turn ${gs.turn}: waiting for ${who}.`;
    }
    if (me !== null && me !== undefined) {
      const mine = gs.seats[me];
      return mine.ready ? "Either player may move: your move whenever you are ready." : "You wait for your cooldown to end; your opponent may move.";
    }
    return "Either player may move when their cooldown is over.";
  },

  describe(event, view) {
    const gs = view.game_state;
    const name = (seat) => gs.seats[seat].name;
    switch (event.type) {
      case "turn_started": return `Turn ${event.turn}: ${name(event.seat)} to move.`;
      case "period_spent": return `${name(event.seat)} spent a period (${event.periods_left} left).`;
      case "moved": {
        const what = event.timed_out ? "ran out of time" : event.bonked ? "bonked into a wall" : `moved ${event.from} → ${event.to}`;
        const got = event.collected.length ? `, reaching ${event.collected.join(", ")}` : "";
        return `${name(event.seat)} ${what}${got}.`;
      }
      case "cooldown_over": return `${name(event.seat)} may move again.`;
      case "game_over": return `Game over: ${event.reason}.`;
      default: return null;
    }
  },
};

class Board {
  constructor(root, ctx) {
    this.ctx = ctx;
    this.draft = "";
    this.turn = null;
    this.svg = s("svg", { class: "mm-grid", role: "application", tabindex: "0", "aria-describedby": "mm-help mm-draft" });
    this.svg.addEventListener("keydown", (e) => this.key(e));
    this.svg.addEventListener("click", (e) => this.click(e));
    this.help = h("p", { class: "hint", id: "mm-help" },
      "Draw your move on the grid: arrow keys (or W A S D) add a step, Backspace takes one back, Enter sends it. ",
      "Or click a cell in line with the end of your drawing.");
    this.draftText = h("p", { id: "mm-draft", class: "mm-draft-text", "aria-live": "polite" });
    this.feedback = h("p", { class: "feedback", id: "mm-feedback", role: "status" });
    const pad = (m, label, col, row) => h("button", {
      type: "button", "aria-label": `add a step ${label}`, style: `grid-column:${col};grid-row:${row}`,
      onclick: () => this.add(m),
    }, { U: "↑", D: "↓", L: "←", R: "→" }[m]);
    this.sendButton = h("button", { type: "button", class: "primary", "aria-describedby": "mm-feedback", onclick: () => this.send() }, "Send move");
    this.controls = h("section", { class: "card mm-controls", "aria-label": "your move" },
      h("h2", {}, "Your move"),
      this.draftText,
      h("div", { class: "mm-pads" }, pad("U", "up", 2, 1), pad("L", "left", 1, 2), pad("D", "down", 2, 2), pad("R", "right", 3, 2)),
      h("div", { class: "row" },
        h("button", { type: "button", onclick: () => this.back() }, "Step back"),
        h("button", { type: "button", onclick: () => this.clear() }, "Clear"),
        this.sendButton),
      this.feedback);
    this.info = h("div", { class: "mm-info" });
    this.grid = h("div", { class: "mm-grid-wrap" }, this.svg, this.help);
    fill(root, h("div", { class: "mm" }, this.grid, h("div", {}, this.controls, this.info)));
  }

  get me() {
    const you = this.view ? this.view.you : null;
    return you === null || you === undefined ? null : you;
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    const gs = view.game_state;
    if (!gs) return;
    if (gs.turn !== this.turn && gs.turns) {
      this.turn = gs.turn;
    }
    const playing = this.me !== null && view.started && !view.ended && !ctx.readonly;
    this.controls.hidden = !playing;
    this.help.hidden = !playing;
    this.draw();
    this.showInfo();
    this.showDraft();
  }

  origin() {
    const gs = this.view.game_state;
    return gs.seats[this.me].position;
  }

  add(m) {
    if (this.me === null) return;
    const gs = this.view.game_state;
    if (this.draft.length >= gs.max_moves) {
      this.say(`at most ${gs.max_moves} steps a move`);
      return;
    }
    this.draft += m;
    this.showDraft();
    this.draw();
  }

  back() {
    this.draft = this.draft.slice(0, -1);
    this.showDraft();
    this.draw();
  }

  clear() {
    this.draft = "";
    this.showDraft();
    this.draw();
  }

  say(text) {
    this.feedback.className = "feedback warn";
    this.feedback.textContent = text;
  }

  showDraft() {
    if (this.me === null || !this.view) return;
    const gs = this.view.game_state;
    const cells = trace(this.origin(), this.draft, gs.size);
    const end = cells[cells.length - 1];
    fill(this.draftText, this.draft
      ? [h("strong", {}, this.draft), ` (${this.draft.length} step${this.draft.length === 1 ? "" : "s"}, ending at ${cellName(...end)} if no wall is in the way)`]
      : gs.turns ? "No step yet: sending nothing passes the turn." : "No step yet.");
    const mine = gs.seats[this.me];
    this.sendButton.disabled = !mine.ready;
    this.sendButton.textContent = gs.turns && !this.draft ? "Pass" : "Send move";
  }

  key(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const m = KEYS[e.key];
    if (m) {
      e.preventDefault();
      this.add(m);
    } else if (e.key === "Backspace") {
      e.preventDefault();
      this.back();
    } else if (e.key === "Enter") {
      e.preventDefault();
      this.send();
    } else if (e.key === "Escape") {
      this.clear();
    }
  }

  click(e) {
    const cell = e.target.closest && e.target.closest("[data-cell]");
    if (!cell || this.me === null || this.controls.hidden) return;
    const gs = this.view.game_state;
    const cells = trace(this.origin(), this.draft, gs.size);
    const [x0, y0] = cells[cells.length - 1];
    const [x, y] = cellXY(cell.dataset.cell);
    if (x !== x0 && y !== y0) {
      this.say(`${cell.dataset.cell} is not in line with ${cellName(x0, y0)}: click a cell in the same row or column`);
      return;
    }
    const m = x > x0 ? "R" : x < x0 ? "L" : y > y0 ? "U" : "D";
    for (let i = 0; i < Math.abs(x - x0) + Math.abs(y - y0); i += 1) this.add(m);
  }

  async send() {
    if (this.me === null) return;
    const gs = this.view.game_state;
    const command = gs.turns ? { type: "move", turn: gs.turn, moves: this.draft } : { type: "move", moves: this.draft };
    const answer = await this.ctx.send(command, this.feedback);
    if (answer.type === "ack") this.clear();
  }

  draw() {
    const gs = this.view.game_state;
    const n = gs.size;
    const Y = (y) => n - 1 - y; // rows count from the bottom
    const m = 0.45; // the margin for coordinates
    this.svg.setAttribute("viewBox", `${-m} ${-0.05} ${n + m + 0.05} ${n + m + 0.05}`);
    const names = gs.seats.map((seat) => seat.name || `seat ${seat.seat}`);
    this.svg.setAttribute("aria-label", `the ${n} by ${n} maze: ${gs.seats.map((seat, i) => `${names[i]} (${seat.letter}) at ${seat.position}`).join(", ")}`);
    const parts = [];
    const targets = new Map();
    gs.seats.forEach((seat) => seat.targets.forEach((t) => {
      if (!targets.has(t)) targets.set(t, []);
      targets.get(t).push(seat);
    }));
    for (let x = 0; x < n; x += 1) {
      for (let y = 0; y < n; y += 1) {
        const name = cellName(x, y);
        parts.push(s("rect", { x, y: Y(y), width: 1, height: 1, class: `mm-cell${targets.has(name) ? " target" : ""}`, "data-cell": name },
          s("title", {}, name)));
      }
    }
    for (let i = 0; i < n; i += 1) {
      parts.push(s("text", { x: -m / 2, y: Y(i) + 0.6, class: "mm-coord", "text-anchor": "middle" }, i + 1));
      parts.push(s("text", { x: i + 0.5, y: n + 0.33, class: "mm-coord", "text-anchor": "middle" }, String.fromCharCode(97 + i)));
    }
    // keys: a corner each seat has still to visit, in its colour
    for (const [t, seats] of targets) {
      const [x, y] = cellXY(t);
      seats.forEach((seat, k) => {
        // a key: a diamond in the seat's colour, hollow once visited
        const done = seat.visited.includes(t);
        const cx = x + 0.22 + k * 0.56;
        const cy = Y(y) + 0.2;
        parts.push(s("polygon", {
          points: `${cx},${cy - 0.13} ${cx + 0.11},${cy} ${cx},${cy + 0.13} ${cx - 0.11},${cy}`,
          class: "mm-key", fill: done ? "none" : COLORS[seat.seat], stroke: COLORS[seat.seat], "stroke-width": 0.04,
        }, s("title", {}, `${t}: a corner ${seat.name || `seat ${seat.seat}`} ${done ? "has visited" : "must visit"}`)));
      });
    }
    // the walls: the outer border always, the inside once the maze is revealed
    parts.push(s("rect", { x: 0, y: 0, width: n, height: n, fill: "none", class: "mm-wall" }));
    const wall = (a, b, cls, color) => {
      const [ax, ay] = cellXY(a);
      const [bx, by] = cellXY(b);
      if (ax === bx) {
        const top = Math.max(ay, by);
        return s("line", { x1: ax, x2: ax + 1, y1: Y(top) + 1, y2: Y(top) + 1, class: cls, stroke: color });
      }
      const right = Math.max(ax, bx);
      return s("line", { x1: right, x2: right, y1: Y(ay), y2: Y(ay) + 1, class: cls, stroke: color });
    };
    if (gs.maze) for (const [a, b] of gs.maze.walls) parts.push(wall(a, b, "mm-wall"));
    for (const cw of gs.colored_walls || []) parts.push(wall(cw.between[0], cw.between[1], "mm-colored", COLORS[cw.owner]));
    // each seat's latest attempt
    gs.seats.forEach((seat) => {
      const last = seat.last;
      if (!last || !last.moves) return;
      const moves = letters(last.moves);
      const cells = last.path ? last.path.map(cellXY) : trace(last.from, moves, n);
      const points = cells.map(([x, y]) => `${x + 0.5 + (seat.seat ? 0.08 : -0.08)},${Y(y) + 0.5}`).join(" ");
      parts.push(s("polyline", { points, class: `mm-path${last.bonked ? " bonked" : ""}`, stroke: COLORS[seat.seat] },
        s("title", {}, `${names[seat.seat]}'s latest attempt: ${moves}${last.bonked ? " (bonked)" : ""}`)));
    });
    // the move being drawn
    if (this.me !== null && this.draft) {
      const cells = trace(this.origin(), this.draft, n);
      parts.push(s("polyline", { points: cells.map(([x, y]) => `${x + 0.5},${Y(y) + 0.5}`).join(" "), class: "mm-draft" }));
    }
    gs.seats.forEach((seat) => {
      const [x, y] = seat.xy;
      parts.push(s("g", { class: "mm-piece" },
        s("circle", { cx: x + 0.5, cy: Y(y) + 0.5, r: 0.36, fill: COLORS[seat.seat], stroke: "#fff", "stroke-width": 0.05 }),
        s("text", { x: x + 0.5, y: Y(y) + 0.52 }, seat.letter)));
    });
    this.svg.replaceChildren(...parts);
  }

  tick(now) {
    this.now = now;
    const el = this.info.querySelector("[data-cooldown]");
    if (el) this.showInfo();
  }

  showInfo() {
    const gs = this.view.game_state;
    const clock = gs.clock;
    const clockText = clock.kind === "periods"
      ? `${clock.periods} periods of ${duration(clock.period_ms)} each`
      : clock.kind === "reserve" ? `${duration(clock.move_ms)} a move plus a reserve`
        : `cooldown ${duration(clock.success_ms)} after a move, ${duration(clock.bonk_ms)} after a bonk`;
    const now = this.now || Date.now();
    fill(this.info,
      h("p", { class: "hint" }, `Clock: ${clockText}. The maze is symmetric about ${gs.symmetry_text}.`),
      gs.seats.map((seat) => {
        const last = seat.last;
        const lastText = !last ? "no attempt yet"
          : last.timed_out ? `turn ${last.turn}: timed out`
            : `${last.moves ? letters(last.moves) : "(moves hidden)"}: ${last.from} → ${last.to}${last.bonked ? ", bonked" : ""}`;
        const clockLine = seat.periods_left !== null && seat.periods_left !== undefined ? `${seat.periods_left} periods left`
          : seat.reserve_ms !== null && seat.reserve_ms !== undefined ? `reserve ${duration(seat.reserve_ms)}`
            : seat.cooldown_until ? `cooling down: ${duration(seat.cooldown_until - now)}` : null;
        return h("section", { class: "card mm-seat", "aria-label": `${seat.name}, seat ${seat.seat}` },
          h("h3", {}, h("span", { class: "dot", style: `background:${COLORS[seat.seat]}`, "aria-hidden": "true" }),
            `${seat.name || "free"} (${seat.letter})`, seat.seat === this.me ? " — you" : ""),
          h("p", {}, `At ${seat.position}; started at ${seat.start}.`),
          h("p", {}, `Corners to visit: ${seat.targets.map((t) => (seat.visited.includes(t) ? `${t} ✓` : t)).join(", ")}`),
          h("p", {}, "Latest attempt: ", lastText),
          clockLine ? h("p", { class: "label", dataset: seat.cooldown_until ? { cooldown: "1" } : {} }, clockLine) : null,
          gs.turns && gs.to_move === seat.seat ? h("p", { class: "submitted yes" }, "to move") : null);
      }));
  }
}
