// Escalator (docs/rules/escalator.md#protocol): every player's level on the escalator
// (with its cap, the locks and who fell), the viewer's own seat (points, commands given
// to it, the colours its block still needs, what it learned), the Fetch (a command of
// the edition and its target) and the Decode (which command given to it is activated),
// and the steps resolved so far.

import { fill, h } from "../ui.js";

const COLOURS = { red: "#c0392b", blue: "#1f5fa8", green: "#2e8b57", yellow: "#b8860b", purple: "#8e44ad", black: "#222" };

function name(view, seat) {
  const s = view.seats[seat];
  return s && s.name ? s.name : `seat ${seat}`;
}

/** What a command does: its text when the server gives one, else its effects. */
function effect(c) {
  if (c.text) return c.text;
  const part = (list) => (list && list.length ? list.join(", ") : "nothing");
  return `target: ${part(c.target)}; user: ${part(c.user)}`;
}

function swatch(colour) {
  return h("span", { class: "esc-colour", style: `background:${COLOURS[colour] || "#888"}`, "aria-hidden": "true" });
}

export default {
  title: "Escalator",

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state;
    if (!gs || gs.phase !== "play") return "";
    const me = gs.me;
    const mine = [];
    if (me && me.must_fetch && !me.fetch) mine.push("your Fetch");
    if (me && me.must_decode && !me.decode) mine.push("your Decode");
    if (mine.length) return `Step ${gs.step}: waiting for ${mine.join(" and ")}.`;
    return `Step ${gs.step}: waiting for the players' Fetch (round ${gs.fetch_round})` +
      (gs.deciders && gs.deciders.length ? ` and Decode (round ${gs.decode_round})` : "") + ".";
  },

  describe(event, view) {
    switch (event.type) {
      case "step_started": return `Step ${event.step} started.`;
      case "fetched": return `Your Fetch for round ${event.round}: ${event.command} on ${name(view, event.target)}.`;
      case "decoded": return `Your Decode for round ${event.round}: ${event.command}.`;
      case "step_resolved": {
        const moved = event.levels.map((l, s) => (l !== event.levels_before[s] ? `${name(view, s)} ${event.levels_before[s]}→${l}` : null)).filter(Boolean);
        return `Step ${event.step} resolved${moved.length ? `: ${moved.join(", ")}` : ""}.`;
      }
      case "auto_resolved": return `The last ${event.steps} steps resolved by themselves.`;
      case "game_over": return `Game over: ${event.reason}.`;
      default: return null;
    }
  },
};

class Board {
  constructor(root, ctx) {
    this.ctx = ctx;
    this.fetchFeedback = h("p", { class: "feedback", id: "esc-fetch-feedback", role: "status" });
    this.decodeFeedback = h("p", { class: "feedback", id: "esc-decode-feedback", role: "status" });
    this.main = h("div");
    this.side = h("div");
    fill(root, h("div", { class: "kts" }, this.main, this.side));
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    const gs = view.game_state;
    if (!gs) return;
    const focused = document.activeElement && document.activeElement.id;
    fill(this.main, this.status(gs), this.tower(view, gs), this.fetchForm(view, gs), this.decodeForm(view, gs));
    fill(this.side, this.meSection(view, gs), this.editionSection(gs), this.historySection(view, gs));
    if (focused) {
      const again = document.getElementById(focused);
      if (again && again !== document.activeElement) again.focus();
    }
  }

  status(gs) {
    return h("p", { class: "fct-status" },
      h("span", {}, h("span", { class: "label" }, "Step "), h("strong", {}, gs.step ?? "—")),
      h("span", {}, h("span", { class: "label" }, " Fetch round "), gs.fetch_round ?? "—"),
      h("span", {}, h("span", { class: "label" }, " Decode round "), gs.decode_round ?? "—"),
      gs.disabled && gs.disabled.length ? h("span", { class: "label" }, ` Disabled: ${gs.disabled.join(", ")}`) : null);
  }

  tower(view, gs) {
    const top = Math.max(1, ...gs.players.map((p) => p.cap || p.level || 0));
    const locks = gs.locks || [];
    return h("section", { class: "card", "aria-labelledby": "esc-tower-h" },
      h("h2", { id: "esc-tower-h" }, "The escalator"),
      h("p", { class: "hint" }, `Locks at levels ${locks.join(", ") || "none"}.`),
      h("ul", { class: "esc-players" }, gs.players.map((p) => h("li", { class: p.seat === view.you ? "you" : "" },
        h("span", { class: "esc-name" }, name(view, p.seat), p.seat === view.you ? " (you)" : ""),
        h("meter", { min: 0, max: top, value: p.level, "aria-label": `${name(view, p.seat)}: level ${p.level} of ${top}` }),
        h("span", { class: "esc-level" }, p.fell !== null && p.fell !== undefined ? `fell (step ${p.fell})` : `level ${p.level}`,
          p.cap !== undefined && p.cap !== null ? h("span", { class: "label" }, ` cap ${p.cap}`) : null)))));
  }

  fetchForm(view, gs) {
    const me = gs.me;
    if (!me || gs.phase !== "play" || !me.must_fetch || this.ctx.readonly) return null;
    const commands = gs.edition.commands;
    const commandSelect = h("select", { id: "esc-command" }, commands.map((c) => h("option", {
      value: c.name, disabled: (gs.disabled || []).includes(c.name),
      selected: me.fetch ? me.fetch.command === c.name : false,
    }, `${c.name} (${c.colour}): ${effect(c)}`)));
    const targets = gs.players.filter((p) => p.seat !== view.you && (p.fell === null || p.fell === undefined));
    const targetSelect = h("select", { id: "esc-target" }, targets.map((p) => h("option", {
      value: p.seat, selected: me.fetch ? me.fetch.target === p.seat : false,
    }, `${name(view, p.seat)} (level ${p.level})`)));
    const form = h("form", { "aria-labelledby": "esc-fetch-h" },
      h("h2", { id: "esc-fetch-h" }, `Your Fetch, round ${gs.fetch_round}`),
      h("div", { class: "row" }, h("label", { for: "esc-command" }, "Command"), commandSelect),
      h("div", { class: "row" }, h("label", { for: "esc-target" }, "Target"), targetSelect),
      h("button", { type: "submit", class: "primary", "aria-describedby": "esc-fetch-feedback" }, me.fetch ? "Change my Fetch" : "Fetch"),
      this.fetchFeedback,
      me.fetch ? h("p", {}, `Your Fetch: ${me.fetch.command} on ${name(view, me.fetch.target)}`) : null);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.ctx.send({ type: "fetch", round: gs.fetch_round, command: commandSelect.value, target: Number(targetSelect.value) },
        this.fetchFeedback, `Round ${gs.fetch_round}: `);
    });
    return h("section", { class: "card" }, form);
  }

  decodeForm(view, gs) {
    const me = gs.me;
    if (!me || gs.phase !== "play" || !me.must_decode || this.ctx.readonly) return null;
    const select = h("select", { id: "esc-decode" }, me.given.map((g) => h("option", {
      value: g.command, selected: me.decode ? me.decode.command === g.command : false,
    }, `${g.command} (${g.colour})`)));
    const form = h("form", { "aria-labelledby": "esc-decode-h" },
      h("h2", { id: "esc-decode-h" }, `Your Decode, round ${gs.decode_round}`),
      h("p", { class: "hint" }, "Choose which of the commands given to you is activated."),
      h("div", { class: "row" }, h("label", { for: "esc-decode" }, "Activate"), select),
      h("button", { type: "submit", class: "primary", "aria-describedby": "esc-decode-feedback" }, me.decode ? "Change my Decode" : "Decode"),
      this.decodeFeedback);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.ctx.send({ type: "decode", round: gs.decode_round, command: select.value }, this.decodeFeedback, `Round ${gs.decode_round}: `);
    });
    return h("section", { class: "card" }, form);
  }

  meSection(view, gs) {
    const me = gs.me;
    if (!me) return null;
    const block = me.block;
    return h("section", { class: "card", "aria-labelledby": "esc-me-h" },
      h("h2", { id: "esc-me-h" }, "You"),
      h("p", {}, me.fell !== null && me.fell !== undefined ? `Fell in step ${me.fell}` : `Level ${me.level} (cap ${me.cap})`, `, ${me.points} point${me.points === 1 ? "" : "s"}`),
      me.given && me.given.length ? h("p", {}, "Given to you: ", me.given.map((g) => [swatch(g.colour), `${g.command} `])) : null,
      block ? h("p", {}, `Your block (rounds ${block.rounds.join("–")}): still needs `,
        block.needed.length ? block.needed.map((c) => [swatch(c), `${c} `]) : "nothing", `; ${block.rounds_left} round${block.rounds_left === 1 ? "" : "s"} left`) : null,
      me.learned && me.learned.length ? h("details", {}, h("summary", {}, `What you learned (${me.learned.length})`),
        h("ul", {}, me.learned.map((l) => h("li", {}, `${l.command}: ${name(view, l.about)}'s ${l.kind} is ${l.value}`)))) : null);
  }

  editionSection(gs) {
    return h("details", { class: "card" }, h("summary", {}, `${gs.edition.title}: the commands`),
      h("ul", { class: "esc-commands" }, gs.edition.commands.map((c) => h("li", {}, swatch(c.colour), h("strong", {}, c.name), ` — ${effect(c)}`,
        (gs.disabled || []).includes(c.name) ? h("em", {}, " (disabled)") : null))));
  }

  historySection(view, gs) {
    // The view carries only the latest step; the board keeps every one it has seen (a
    // page that says hello from the start is sent each update again, so it sees them all).
    this.steps = this.steps || new Map();
    if (gs.last_step) this.steps.set(gs.last_step.step, gs.last_step);
    const steps = [...this.steps.values()].sort((a, b) => a.step - b.step);
    if (!steps.length) return null;
    return h("details", { class: "card" }, h("summary", {}, `Steps so far (${steps.length})`),
      h("ol", {}, steps.map((e) => h("li", { value: e.step }, `used ${e.used.join(", ") || "nothing"}; levels ${e.levels.join(" ")}`))));
  }
}
