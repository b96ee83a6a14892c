// Five-Card Trick (docs/rules/five-card-trick.md#protocol): the pot, each seat's chips,
// lights, blocked actions, last two rounds and items; the move composer (up to two cards,
// three with Overload; the Block's target; the items) and Claim Priority; the last
// round's resolution. Words come from the variant's `terms`.

import { fill, h, plural } from "../ui.js";

const ACTIONS = ["score", "grow", "claim", "steal", "block"];
const SUBMISSION_ITEMS = ["overload", "limit_reset"];

function term(gs, action) {
  return (gs.terms && gs.terms.actions[action]) || action;
}

function itemTerm(gs, item) {
  return (gs.terms && gs.terms.items && gs.terms.items[item]) || item;
}

function chips(gs, n) {
  return plural(n, gs.terms.chip, gs.terms.chip_plural);
}

export default {
  title: "Five-Card Trick",

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state;
    if (!gs || gs.over) return "";
    const missing = gs.seats.filter((s) => !s.submitted);
    const round = `Round ${gs.round} of ${gs.end_round}`;
    if (!missing.length) return `${round}: resolving.`;
    const names = missing.map((s) => (s.seat === view.you ? "your move" : `${s.name}'s move`));
    const mine = view.you !== null && gs.seats[view.you] && gs.seats[view.you].submitted
      ? " (yours is in; you may still change it)" : "";
    return `${round}: waiting for ${names.join(" and ")}${mine}.`;
  },

  describe(event, view) {
    const gs = view.game_state;
    switch (event.type) {
      case "round_started": return `Round ${event.round} started.`;
      case "submitted": return `${gs.seats[event.seat].name} submitted for round ${event.round}.`;
      case "round_resolved": {
        const parts = event.seats.map((s) => `${gs.seats[s.seat].name} +${s.gained}`);
        const took = event.taken_by !== null ? `; ${gs.seats[event.taken_by].name} took the ${gs.terms.pot}` : "";
        return `Round ${event.round} resolved: ${parts.join(", ")}${took}.`;
      }
      case "round_replayed": return `Round ${event.round} is played again (replay ${event.replays}).`;
      case "priority_claimed": return `${gs.seats[event.seat].name} used Claim Priority and took ${event.took}.`;
      case "extended": return `Tied after round ${event.after_round}: the match goes on to round ${event.until}.`;
      case "game_over": return `Game over: ${event.reason}.`;
      default: return null;
    }
  },
};

class Board {
  constructor(root, ctx) {
    this.root = root;
    this.hand = []; // the cards chosen for this round, in order
    this.items = new Set();
    this.round = null;
    this.status = h("div", { class: "fct-status" });
    this.seats = h("div", { class: "fct-seats" });
    this.composer = h("section", { class: "card fct-composer", "aria-labelledby": "fct-move-h" });
    this.last = h("section", { class: "card fct-last", "aria-labelledby": "fct-last-h" });
    this.feedback = h("p", { class: "feedback", id: "move-feedback", role: "status" });
    this.priorityFeedback = h("p", { class: "feedback", role: "status" });
    fill(root, this.status, this.seats, this.composer, this.last);
    this.ctx = ctx;
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    const gs = view.game_state;
    if (!gs) return;
    if (gs.round !== this.round) {
      // A new round: the composer starts empty (a move already in is shown as pending).
      this.round = gs.round;
      this.hand = [];
      this.items = new Set();
      this.blockTarget = null;
    }
    fill(this.status,
      h("span", { class: "stat" }, h("span", { class: "label" }, "Round "), h("strong", {}, gs.round ?? "—"),
        ` of ${gs.end_round}`),
      h("span", { class: "stat pot", "aria-label": `${gs.terms.pot}: ${chips(gs, gs.pot)}` },
        h("span", { class: "label" }, `${gs.terms.pot[0].toUpperCase()}${gs.terms.pot.slice(1)} `),
        h("strong", {}, gs.pot)),
      gs.replays ? h("span", { class: "stat" }, `replays ${gs.replays}`) : null);
    fill(this.seats, gs.seats.map((s) => this.seatPanel(gs, s, view)));
    this.showComposer(view, gs);
    this.showLast(gs);
  }

  seatPanel(gs, s, view) {
    const lights = ACTIONS.map((a) => {
      const on = s.lights.includes(a);
      return h("li", { class: `light ${on ? "on" : "off"}`, title: term(gs, a) },
        h("span", { class: "sr-only" }, `${term(gs, a)} ${on ? "on" : "off"}`),
        h("span", { "aria-hidden": "true" }, term(gs, a).slice(0, 2)));
    });
    const history = ["r-2", "r-1"].map((k) => {
      const cards = s.history[k];
      const text = cards === null ? "—" : cards.length ? cards.map((a) => term(gs, a)).join(" + ") : "nothing";
      return h("li", {}, h("span", { class: "label" }, k === "r-1" ? "last round " : "round before "), text);
    });
    return h("article", { class: `card fct-seat${s.seat === view.you ? " you" : ""}`, "aria-label": `${s.name || "free"}, seat ${s.seat}` },
      h("h3", {}, s.name || "free", s.seat === view.you ? " (you)" : "", s.dmo ? h("span", { class: "badge", title: "Death Match Opponent: wins a tie after the last round" }, "DMO") : null),
      h("p", { class: "chips" }, h("strong", {}, s.chips), ` ${s.chips === 1 ? gs.terms.chip : gs.terms.chip_plural}`),
      h("p", { class: "label" }, `${gs.terms.light_plural}:`),
      h("ul", { class: "lights", "aria-label": `${s.name}'s ${gs.terms.light_plural}` }, lights),
      s.blocked.length ? h("p", { class: "blocked" }, "Blocked this round: ", s.blocked.map((a) => term(gs, a)).join(", ")) : null,
      h("ul", { class: "history", "aria-label": "cards that counted" }, history),
      s.items.length || s.used_items.length
        ? h("p", { class: "items" }, "Items: ", s.items.map((i) => itemTerm(gs, i)).join(", ") || "none",
          s.used_items.length ? ` (used: ${s.used_items.map((i) => itemTerm(gs, i)).join(", ")})` : "")
        : null,
      h("p", { class: `submitted ${s.submitted ? "yes" : "no"}` }, s.submitted ? "✓ submitted" : "not submitted yet"),
      s.pending ? this.pendingText(gs, s.pending) : null);
  }

  pendingText(gs, p) {
    const cards = p.actions.map((a) => term(gs, a)).join(" + ") || "no card";
    return h("div", { class: "pending" },
      h("p", {}, "Your move: ", h("strong", {}, cards),
        p.block ? ` (blocking ${term(gs, p.block)})` : "",
        p.items.length ? `, with ${p.items.map((i) => itemTerm(gs, i)).join(", ")}` : ""),
      p.disregarded.length ? h("p", { class: "warn" }, "Will be disregarded: ", p.disregarded.map((a) => term(gs, a)).join(", ")) : null,
      p.warnings.length ? h("ul", { class: "warn" }, p.warnings.map((w) => h("li", {}, w))) : null);
  }

  maxCards(gs) {
    return this.items.has("overload") ? 3 : 2;
  }

  showComposer(view, gs) {
    const me = view.you !== null && view.you !== undefined ? gs.seats[view.you] : null;
    if (!me || view.ended || !view.started || gs.round === null || this.ctx.readonly) {
      this.composer.hidden = true;
      return;
    }
    this.composer.hidden = false;
    const final = gs.variant === "final";
    const max = this.maxCards(gs);
    const chosen = h("ol", { class: "hand", "aria-label": "your cards this round" },
      this.hand.length ? this.hand.map((a, i) => h("li", {},
        h("button", { type: "button", class: "chip-card", "aria-label": `remove ${term(gs, a)}`, onclick: () => { this.hand.splice(i, 1); this.update(this.view, [], this.ctx); } },
          term(gs, a), " ✕"))) : h("li", { class: "hint" }, "no card: choose up to two"));
    const buttons = ACTIONS.map((a, i) => {
      const inHand = this.hand.filter((x) => x === a).length;
      const full = this.hand.length >= max;
      const may = !full && (final ? inHand < 2 : inHand === 0);
      return h("button", {
        type: "button", class: `action${inHand ? " chosen" : ""}${me.blocked.includes(a) ? " blocked" : ""}`,
        "aria-pressed": inHand ? "true" : "false", "aria-keyshortcuts": String(i + 1),
        disabled: !may && !inHand,
        onclick: () => {
          if (!final && inHand) this.hand = this.hand.filter((x) => x !== a);
          else if (may) this.hand.push(a);
          this.update(this.view, [], this.ctx);
          const again = this.composer.querySelector(`button.action[data-action="${a}"]`);
          if (again) again.focus();
        },
        dataset: { action: a },
      }, h("span", { class: "key", "aria-hidden": "true" }, i + 1), " ", term(gs, a),
      me.blocked.includes(a) ? h("span", { class: "sr-only" }, " (blocked this round)") : null);
    });
    let blockSelect = null;
    if (this.hand.includes("block")) {
      blockSelect = h("select", { id: "block-target" },
        h("option", { value: "" }, "— choose —"),
        ACTIONS.filter((a) => a !== "block").map((a) => h("option", { value: a, selected: this.blockTarget === a }, term(gs, a))));
      blockSelect.addEventListener("change", () => { this.blockTarget = blockSelect.value || null; });
    }
    const heldItems = me.items.filter((i) => SUBMISSION_ITEMS.includes(i));
    const itemBoxes = heldItems.map((item) => {
      const id = `item-${item}`;
      const box = h("input", { type: "checkbox", id, checked: this.items.has(item) });
      box.addEventListener("change", () => {
        if (box.checked) this.items.add(item); else this.items.delete(item);
        if (!this.items.has("overload") && this.hand.length > 2) this.hand = this.hand.slice(0, 2);
        this.update(this.view, [], this.ctx);
        document.getElementById(id)?.focus();
      });
      return h("span", { class: "item" }, box, h("label", { for: id }, ` ${itemTerm(gs, item)}`));
    });
    const submit = h("button", { type: "submit", class: "primary", "aria-describedby": "move-feedback" },
      me.submitted ? "Change my move" : "Submit move");
    const form = h("form", { class: "move" },
      h("h2", { id: "fct-move-h" }, `Your move, round ${gs.round}`),
      h("div", { class: "actions", role: "group", "aria-label": `${gs.terms.action_plural} (keys 1 to 5)` }, buttons),
      chosen,
      blockSelect ? h("div", { class: "row" }, h("label", { for: "block-target" }, `${term(gs, "block")} which ${gs.terms.action}?`), blockSelect) : null,
      itemBoxes.length ? h("div", { class: "items", role: "group", "aria-label": "items" }, itemBoxes) : null,
      h("div", { class: "row" }, submit, h("span", { class: "hint" }, ` keys: 1–5 add a card, Enter submits`)),
      this.feedback);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(gs);
    });
    form.addEventListener("keydown", (event) => {
      if (event.target.tagName === "SELECT" || event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key === "Enter") {
        // Enter sends the move from anywhere in it (on a card's button too, which it
        // would otherwise press).
        event.preventDefault();
        this.send(gs);
        return;
      }
      const n = Number(event.key);
      if (n >= 1 && n <= 5) {
        event.preventDefault();
        buttons[n - 1].click();
      }
    });
    const priority = me.claim_priority_available
      ? h("div", { class: "row" },
        h("button", { type: "button", onclick: () => this.ctx.send({ type: "use_item", item: "claim_priority", round: gs.round }, this.priorityFeedback) },
          `Use ${itemTerm(gs, "claim_priority")}`), this.priorityFeedback)
      : null;
    const focused = document.activeElement && this.composer.contains(document.activeElement)
      ? document.activeElement.dataset.action || document.activeElement.id || null : null;
    fill(this.composer, form, priority);
    if (focused) {
      const again = this.composer.querySelector(`[data-action="${focused}"]`) || this.composer.querySelector(`#${CSS.escape(focused)}`);
      if (again) again.focus();
    }
  }

  send(gs) {
    const block = this.hand.includes("block") ? (this.blockTarget || null) : null;
    const command = { type: "submit", round: gs.round, actions: [...this.hand], block, items: [...this.items] };
    this.ctx.send(command, this.feedback, `Round ${gs.round}: `);
  }

  showLast(gs) {
    const r = gs.last_round;
    if (!r) {
      this.last.hidden = true;
      return;
    }
    this.last.hidden = false;
    const rows = r.seats.map((s) => h("tr", {},
      h("th", { scope: "row" }, gs.seats[s.seat].name),
      h("td", {}, s.submitted ? h("ul", { class: "plays" }, s.plays.map((p) => h("li", { class: `play ${p.status}` },
        `${p.name}${p.copies > 1 ? ` ×${p.copies}` : ""}: ${p.status}`, p.reason_text ? ` (${p.reason_text})` : ""))) : "no move"),
      h("td", {}, s.block ? term(gs, s.block) : "—"),
      h("td", {}, `+${s.gained}`, s.bonus ? ` (bonus ${s.bonus})` : "", s.took ? ` (took ${s.took})` : ""),
      h("td", {}, s.chips)));
    fill(this.last,
      h("h2", { id: "fct-last-h" }, `Round ${r.round}`),
      h("p", {}, `${gs.terms.pot}: ${r.pot_before} → ${r.pot_after}`, r.grown ? ` (grew ${r.grown})` : "",
        r.taken_by !== null ? `; taken by ${gs.seats[r.taken_by].name}` : ""),
      h("div", { class: "scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, "seat"), h("th", {}, "cards"), h("th", {}, "blocked"), h("th", {}, "gained"), h("th", {}, gs.terms.chip_plural))),
        h("tbody", {}, rows))));
  }
}
