// Keys to Success / Gatekeeping (docs/rules/keys-to-success.md#protocol): the viewer's
// own level, its members and its gates with their states; the hand of cards; the move
// (one gate or two adjacent ones, and cards); the level's chat; the rounds seen; the
// winners' vote. Once play is over every level and player is shown. Words come from the
// variant's `terms` (rooms and doors, or levels and gates).

import { fill, h } from "../ui.js";

function cap(word) {
  return word ? word[0].toUpperCase() + word.slice(1) : "";
}

/** The theme's word for a card when it is not just its number ("dagger" for 1). */
function cardWord(t, value) {
  const word = t.card_names && t.card_names[String(value)];
  return word && !word.endsWith(` ${value}`) ? word : null;
}

function name(view, seat) {
  const s = view.seats[seat];
  return s && s.name ? s.name : `seat ${seat}`;
}

export default {
  title: "Keys to Success",

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state;
    if (!gs) return "";
    const t = gs.terms;
    if (gs.phase === "vote") return "Play is over: the winners vote for the Elimination Candidate.";
    if (gs.phase !== "play") return "";
    const me = gs.me;
    if (!me) return `Round ${gs.round}: waiting for the players' moves.`;
    if (me.escaped !== null) return `Round ${gs.round}: you escaped in round ${me.escaped}; the others play on.`;
    if (me.can_submit && !me.submitted) return `Round ${gs.round}: waiting for your move (a ${t.gate} and ${t.card_plural}).`;
    if (me.can_submit) return `Round ${gs.round}: your move is in (you may change it); waiting for the others.`;
    return `Round ${gs.round}: waiting for the others.`;
  },

  describe(event, view) {
    const gs = view.game_state;
    switch (event.type) {
      case "round_started": return `Round ${event.round} started${event.place ? ` in ${event.place}` : ""}.`;
      case "submitted": return `Your move for round ${event.round}: ${event.gates.join("+")} with ${event.cards.join("+")}.`;
      case "chat": return `${name(view, event.seat)}: ${event.text}`;
      case "round_resolved": {
        if (!event.results) return `Round ${event.round} resolved.`;
        const entered = event.results.filter((r) => r.entered).map((r) => `${name(view, r.seat)} through ${r.entered}`);
        return `Round ${event.round}: ${entered.length ? entered.join(", ") : `nobody went through a ${gs.terms.gate}`}.`;
      }
      case "play_ended": return `Play is over (round ${event.round}): winners ${event.winners.map((s) => name(view, s)).join(", ") || "none"}.`;
      case "vote_cast": return `${name(view, event.seat)} voted${event.candidate !== undefined && event.candidate !== null ? ` for ${name(view, event.candidate)}` : ""}.`;
      case "game_over": return `Game over: ${event.reason}.`;
      default: return null;
    }
  },
};

class Board {
  constructor(root, ctx) {
    this.ctx = ctx;
    this.gates = []; // chosen gate names
    this.cards = []; // chosen indexes into the hand
    this.round = null;
    this.main = h("div", { class: "kts-main" });
    this.moveFeedback = h("p", { class: "feedback", id: "kts-move-feedback", role: "status" });
    this.chatFeedback = h("p", { class: "feedback", id: "kts-chat-feedback", role: "status" });
    this.voteFeedback = h("p", { class: "feedback", id: "kts-vote-feedback", role: "status" });
    this.chatInput = h("input", { type: "text", id: "kts-chat", autocomplete: "off", "aria-describedby": "kts-chat-feedback" });
    // The chat stays in place (an update does not take the focus from what is typed).
    this.chatTitle = h("h2", { id: "kts-chat-h" }, "Chat");
    this.chatList = h("ul", { class: "chat-log", "aria-live": "polite", "aria-label": "messages" });
    this.chatHint = h("p", { class: "hint" });
    this.chatForm = h("form", { class: "chat-form" },
      h("label", { for: "kts-chat", class: "sr-only" }, "message"), this.chatInput,
      h("button", { type: "submit" }, "Send"));
    this.chatForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.ctx.send({ type: "chat", text: this.chatInput.value }, this.chatFeedback).then((answer) => {
        if (answer.type === "ack") this.chatInput.value = "";
      });
    });
    this.meBox = h("div");
    this.historyBox = h("div");
    this.chatBox = h("section", { class: "card", "aria-labelledby": "kts-chat-h" },
      this.chatTitle, this.chatList, this.chatForm, this.chatHint, this.chatFeedback);
    fill(root, h("div", { class: "kts" }, this.main, h("div", { class: "kts-side" }, this.meBox, this.chatBox, this.historyBox)));
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    const gs = view.game_state;
    if (!gs) return;
    if (gs.round !== this.round) {
      this.round = gs.round;
      this.gates = [];
      this.cards = [];
    }
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const move = this.moveSection(view, gs);
    // The answer to the last move stays in sight when the move's controls go (the round
    // resolved at once, the player escaped, play ended).
    fill(this.main, this.levelSection(view, gs), move, move && move.contains(this.moveFeedback) ? null : this.moveFeedback,
      this.voteSection(view, gs), this.openSection(view, gs));
    fill(this.meBox, this.meSection(view, gs));
    this.showChat(view, gs);
    fill(this.historyBox, this.historySection(view, gs));
    if (focused) {
      const again = this.main.querySelector(`[data-key="${CSS.escape(focused)}"]`);
      if (again) again.focus();
    }
  }

  levelSection(view, gs) {
    const t = gs.terms;
    if (!gs.level) {
      if (gs.phase === "play" && !gs.me) {
        return h("section", { class: "card" }, h("h2", {}, `${cap(t.level_plural)} and ${t.gate_plural}`),
          h("p", { class: "hint" }, "While play goes on a spectator sees only the round and the layout; everything is shown when play ends."),
          this.layoutList(gs, null));
      }
      return null;
    }
    const level = gs.level;
    const mine = gs.me && gs.me.can_submit && gs.phase === "play" && !this.ctx.readonly;
    const gateButtons = level.gates.map((g, i) => {
      const chosen = this.gates.includes(g.name);
      const usable = g.status === "open";
      const label = `${t.gate} ${g.name}, ${t.kinds[g.kind] || g.kind}, ${g.status}${g.reopens ? ` until round ${g.reopens}` : ""}`;
      return h("li", {}, h("button", {
        type: "button", class: `gate ${g.kind} ${g.status}`, "aria-pressed": chosen ? "true" : "false",
        "aria-label": label, disabled: !mine || !usable, dataset: { key: `gate-${g.name}` },
        onclick: () => this.toggleGate(level, i),
      }, g.name, h("small", { "aria-hidden": "true" }, g.status === "open" ? g.kind : g.status)));
    });
    return h("section", { class: "card", "aria-labelledby": "kts-level-h" },
      h("h2", { id: "kts-level-h" }, `${level.place}${level.escaped ? " (escaped)" : ""}`),
      h("p", {}, `With you: ${level.members.filter((m) => m !== view.you).map((m) => name(view, m)).join(", ") || "nobody"}`),
      h("p", { class: "hint" }, `${cap(t.gate_plural)}: choose one, or two next to each other. Green: open; orange: pass; purple: garnet. `),
      h("ul", { class: "gates", role: "group", "aria-label": `${t.gate_plural} of ${level.place}` }, gateButtons));
  }

  toggleGate(level, i) {
    const g = level.gates[i].name;
    if (this.gates.includes(g)) {
      this.gates = this.gates.filter((x) => x !== g);
    } else {
      const index = (n) => level.gates.findIndex((x) => x.name === n);
      const adjacent = this.gates.length === 1 && Math.abs(index(this.gates[0]) - i) === 1;
      this.gates = adjacent ? [...this.gates, g].sort((a, b) => index(a) - index(b)) : [g];
    }
    this.update(this.view, [], this.ctx);
  }

  moveSection(view, gs) {
    const me = gs.me;
    const t = gs.terms;
    if (!me || gs.phase !== "play" || this.ctx.readonly) return null;
    if (!me.can_submit) {
      return h("section", { class: "card" }, h("p", {}, me.escaped !== null ? `You escaped in round ${me.escaped}.` : `You hold no ${t.card_plural}.`));
    }
    const cardButtons = me.hand.map((value, i) => {
      const chosen = this.cards.includes(i);
      return h("li", {}, h("button", {
        type: "button", class: "kcard", "aria-pressed": chosen ? "true" : "false", dataset: { key: `card-${i}` },
        "aria-label": t.card_names[String(value)] || `${t.card} ${value}`,
        onclick: () => {
          this.cards = chosen ? this.cards.filter((x) => x !== i) : [...this.cards, i];
          this.update(this.view, [], this.ctx);
        },
      }, value, cardWord(t, value) ? h("small", { "aria-hidden": "true" }, cardWord(t, value)) : null));
    });
    const strength = this.cards.reduce((sum, i) => sum + me.hand[i], 0);
    const submit = h("button", { type: "button", class: "primary", "aria-describedby": "kts-move-feedback", dataset: { key: "submit" },
      onclick: () => this.ctx.send({ type: "submit", round: gs.round, gates: [...this.gates], cards: this.cards.map((i) => me.hand[i]) }, this.moveFeedback, `Round ${gs.round}: `),
    }, me.submitted ? "Change my move" : "Submit move");
    const pending = me.pending
      ? h("p", {}, "Your move: ", h("strong", {}, me.pending.gates.join(" + ")), ` with ${me.pending.cards.join(" + ")} (${t.strength} ${me.pending.strength})`)
      : null;
    return h("section", { class: "card", "aria-labelledby": "kts-move-h" },
      h("h2", { id: "kts-move-h" }, `Your move, round ${gs.round}`),
      h("p", { class: "hint" }, `Your ${t.card_plural}: choose the ones to play (their sum is your ${t.strength} at each chosen ${t.gate}).`),
      h("ul", { class: "cards", role: "group", "aria-label": `your ${t.card_plural}` }, cardButtons),
      h("p", {}, `Chosen: ${this.gates.length ? this.gates.join(" + ") : `no ${t.gate}`}, ${this.cards.length ? this.cards.map((i) => me.hand[i]).join(" + ") : `no ${t.card}`} — ${t.strength} ${strength}`),
      h("div", { class: "row" }, submit),
      this.moveFeedback,
      pending);
  }

  voteSection(view, gs) {
    if (gs.phase !== "vote" || !gs.results) return null;
    const r = gs.results;
    const me = gs.me;
    const winner = me && r.winners.includes(view.you) && !this.ctx.readonly;
    let form = null;
    if (winner) {
      const select = h("select", { id: "kts-vote" }, r.losers.map((s) => h("option", { value: s, selected: me.vote === s }, name(view, s))));
      form = h("div", { class: "row" },
        h("label", { for: "kts-vote" }, "Eliminate"), select,
        h("button", { type: "button", class: "primary", "aria-describedby": "kts-vote-feedback",
          onclick: () => this.ctx.send({ type: "vote", candidate: Number(select.value) }, this.voteFeedback) }, me.vote !== null ? "Change my vote" : "Vote"));
    }
    return h("section", { class: "card", "aria-labelledby": "kts-vote-h" },
      h("h2", { id: "kts-vote-h" }, "The vote"),
      h("p", {}, `Winners: ${r.winners.map((s) => name(view, s)).join(", ") || "none"}. Losers: ${r.losers.map((s) => name(view, s)).join(", ") || "none"}.`),
      winner ? h("p", {}, "You are among the winners: choose the Elimination Candidate among the losers.") : h("p", { class: "hint" }, "The winners choose the Elimination Candidate among the losers."),
      form, this.voteFeedback);
  }

  openSection(view, gs) {
    if (!gs.open || !gs.all_levels) return null;
    return h("section", { class: "card", "aria-labelledby": "kts-all-h" },
      h("h2", { id: "kts-all-h" }, `Every ${gs.terms.level}`),
      h("ul", { class: "levels" }, gs.all_levels.map((level) => h("li", {},
        h("strong", {}, level.place || `depth ${level.depth}`), ": ",
        (level.members || []).map((m) => name(view, m)).join(", ") || "nobody",
        level.gates ? h("ul", { class: "gates", "aria-label": `${gs.terms.gate_plural} of ${level.place}` }, level.gates.map((g) =>
          h("li", { class: `gate button ${g.kind} ${g.status}`, title: `${g.name}: ${g.kind}, ${g.status}` }, g.name))) : null))),
      gs.players ? h("div", { class: "scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, ["seat", "where", gs.terms.card_plural, "garnets", "passes", "vote"].map((c) => h("th", {}, c)))),
        h("tbody", {}, gs.players.map((p) => h("tr", {},
          h("th", { scope: "row" }, name(view, p.seat)),
          h("td", {}, p.escaped !== null ? `escaped (round ${p.escaped})` : p.place),
          h("td", {}, p.hand.join(" ")), h("td", {}, p.garnets), h("td", {}, p.passes),
          h("td", {}, p.vote !== null && p.vote !== undefined ? name(view, p.vote) : p.voted ? "voted" : "—")))))) : null);
  }

  layoutList(gs) {
    return h("ul", { class: "levels" }, gs.layout.map((level) => h("li", {},
      h("strong", {}, level.place), h("ul", { class: "gates", "aria-label": `${gs.terms.gate_plural} of ${level.place}` },
        level.gates.map((g) => h("li", { class: `gate button ${g.kind}`, title: `${g.name}: ${g.kind}` }, g.name))))));
  }

  meSection(view, gs) {
    const me = gs.me;
    if (!me) return null;
    const t = gs.terms;
    return h("section", { class: "card", "aria-labelledby": "kts-me-h" },
      h("h2", { id: "kts-me-h" }, "You"),
      h("p", {}, me.escaped !== null ? `Escaped in round ${me.escaped}` : `In ${me.place}`),
      h("p", {}, `${cap(t.card_plural)}: ${me.hand.length ? me.hand.join(" ") : "none"}`),
      h("p", {}, `Garnets ${me.garnets}, passes ${me.passes}`));
  }

  showChat(view, gs) {
    const me = gs.me;
    const messages = gs.chat || [];
    this.chatTitle.textContent = gs.phase === "vote" ? "Chat (everyone)" : `Chat${gs.level ? ` in ${gs.level.place}` : ""}`;
    fill(this.chatList, messages.length
      ? messages.map((m) => h("li", {}, h("strong", {}, `${name(view, m.seat)}: `), m.text))
      : h("li", { class: "hint" }, "No message this round."));
    this.chatForm.hidden = !(me && (gs.phase === "play" || gs.phase === "vote")) || this.ctx.readonly;
    this.chatHint.textContent = me ? `${me.chats_left} message${me.chats_left === 1 ? "" : "s"} left this round` : "";
  }

  historySection(view, gs) {
    const rounds = gs.history || [];
    if (!rounds.length) return null;
    const line = (r) => {
      if (r.levels) {
        return r.levels.map((l) => `${l.place}: ${l.results.filter((x) => x.entered).map((x) => `${name(view, x.seat)}→${x.entered}`).join(", ") || "none through"}`).join("; ");
      }
      const through = (r.results || []).filter((x) => x.entered).map((x) => `${name(view, x.seat)}→${x.entered}`).join(", ");
      const you = r.you ? ` You: ${r.you.gates.join("+")} with ${r.you.cards.join("+")}${r.you.auto ? " (played for you)" : ""}${r.you.entered ? `, through ${r.you.entered}` : ""}.` : "";
      return `${r.place || ""}: ${through || "nobody through"}.${you}`;
    };
    return h("details", { class: "card" }, h("summary", {}, `Rounds so far (${rounds.length})`),
      h("ol", {}, rounds.map((r) => h("li", { value: r.round }, line(r)))));
  }
}
