// The board of a game that has none of its own yet: its `game_state` as the server sends
// it, and a form for each of its commands built from GET /schema (`commands.<game>`), so
// that every hosted game can be played and watched in the browser. A game's own board,
// boards/<game>.js, replaces it.

import { api, fill, h } from "../ui.js";

export default {
  title: null, // the game's title from GET /games

  create(root, ctx) {
    return new Board(root, ctx);
  },

  waitingFor(view) {
    const gs = view.game_state || {};
    return gs.round !== undefined && gs.round !== null ? `Round ${gs.round}.` : "";
  },

  describe(event) {
    const { type, ...rest } = event;
    const text = JSON.stringify(rest);
    return `${type}${text === "{}" ? "" : ` ${text.length > 160 ? `${text.slice(0, 157)}…` : text}`}`;
  },
};

function resolve(schema, ref) {
  return ref && ref.startsWith("#/$defs/") ? schema.$defs[ref.slice(8)] : null;
}

class Board {
  constructor(root, ctx) {
    this.ctx = ctx;
    this.forms = h("section", { class: "card", "aria-labelledby": "generic-cmd-h", hidden: true },
      h("h2", { id: "generic-cmd-h" }, "Commands"));
    this.state = h("pre", { class: "card generic-state", tabindex: "0", "aria-label": "the game's state" });
    fill(root, h("p", { class: "hint" }, "This game has no board of its own yet: its state is shown as the server sends it."),
      this.forms, this.state);
  }

  async loadCommands(game) {
    this.loading = true;
    const answer = await api("/schema");
    if (!answer.ok) return;
    const schema = answer.body;
    const def = schema.$defs[`commands.${game}`];
    if (!def) return;
    const variants = (def.anyOf || def.oneOf || [def]).map((d) => resolve(schema, d.$ref) || d);
    this.commandForms = variants.map((d) => this.commandForm(d));
    this.forms.append(...this.commandForms.map((f) => f.form));
    this.showForms();
  }

  commandForm(def) {
    const type = def.properties.type.enum[0];
    const feedback = h("p", { class: "feedback", role: "status", id: `cmd-${type}-feedback` });
    const fields = Object.entries(def.properties).filter(([name]) => name !== "type").map(([name, prop]) => {
      const id = `cmd-${type}-${name}`;
      const kind = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
      const input = kind === "integer" || kind === "number"
        ? h("input", { id, type: "number", step: kind === "integer" ? "1" : "any" })
        : kind === "string" ? h("input", { id, type: "text" })
          : h("input", { id, type: "text", placeholder: "JSON" });
      const read = () => {
        if (input.value.trim() === "") return undefined;
        if (kind === "integer" || kind === "number") return Number(input.value);
        if (kind === "string") return input.value;
        return JSON.parse(input.value);
      };
      return { name, input, read, required: (def.required || []).includes(name),
        row: h("div", { class: "row" }, h("label", { for: id }, name), input) };
    });
    const form = h("form", { "aria-label": `command ${type}` }, h("h3", {}, type),
      def.description ? h("p", { class: "hint" }, def.description) : null,
      fields.map((f) => f.row),
      h("button", { type: "submit", class: "primary", "aria-describedby": feedback.id }, `Send ${type}`), feedback);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const command = { type };
      try {
        for (const f of fields) {
          const value = f.read();
          if (value !== undefined) command[f.name] = value;
        }
      } catch (exc) {
        feedback.className = "feedback error";
        feedback.textContent = exc.message;
        return;
      }
      this.ctx.send(command, feedback);
    });
    return { type, form, fields };
  }

  showForms() {
    const view = this.view;
    if (!view || !this.commandForms) return;
    const playing = view.you !== null && view.you !== undefined && view.started && !view.ended && !this.ctx.readonly;
    this.forms.hidden = !playing;
    // A command's `round` is filled in from the state: its own (`fetch_round` for a
    // `fetch`), else the round in play.
    const gs = view.game_state || {};
    for (const { type, fields } of this.commandForms) {
      const round = gs[`${type}_round`] ?? gs.round;
      for (const f of fields) {
        if (f.name === "round" && round !== undefined && round !== null && document.activeElement !== f.input) f.input.value = round;
      }
    }
  }

  update(view, events, ctx) {
    this.ctx = ctx;
    this.view = view;
    if (!this.loading) this.loadCommands(view.game);
    this.state.textContent = JSON.stringify(view.game_state, null, 2);
    this.showForms();
  }
}
