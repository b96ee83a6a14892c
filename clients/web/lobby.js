// The lobby: the games and their variants with their options (GET /games, a form built
// from each variant's option schema), creating a match and sharing its seat links, and the
// matches waiting for players and in play (GET /lobby, a page at a time).

import { randomId } from "./conn.js";
import { api, copyButton, fill, h, holdSeat, seatLink, watchLink } from "./ui.js";

export function showLobby(root) {
  const createSection = h("section", { class: "card", "aria-labelledby": "create-h" },
    h("h2", { id: "create-h" }, "New match"));
  const createdSection = h("section", { class: "card created", "aria-live": "polite", hidden: true });
  const waiting = listSection("waiting", "Waiting for players", "Take a seat");
  const playing = listSection("playing", "In play", "Watch");
  root.append(h("h1", {}, "Lobby"), createSection, createdSection, waiting.section, playing.section, replayForm());
  buildCreateForm(createSection, createdSection);
  waiting.load();
  playing.load();
  const refresh = setInterval(() => {
    waiting.load();
    playing.load();
  }, 10000);
  return { page: "lobby", close: () => clearInterval(refresh) };
}

async function buildCreateForm(section, createdSection) {
  const answer = await api("/games");
  if (!answer.ok) {
    section.append(h("p", { class: "error", role: "alert" }, answer.body.error.message));
    return;
  }
  const games = answer.body.games;
  const matchOptions = answer.body.match_options || {}; // every match's, whatever its game
  const gameSelect = h("select", { id: "game", name: "game" },
    games.map((g) => h("option", { value: g.name }, `${g.title} (${g.seats} seats)`)));
  const variantSelect = h("select", { id: "variant", name: "variant" });
  const summary = h("p", { class: "hint", id: "variant-summary" });
  const optionsBox = h("fieldset", { class: "options" });
  const optionsDetails = h("details", { class: "options-box" }, h("summary", {}, "Options"), optionsBox);
  const feedback = h("p", { class: "feedback", role: "status" });
  const form = h("form", { class: "create" },
    h("div", { class: "row" }, h("label", { for: "game" }, "Game"), gameSelect),
    h("div", { class: "row" }, h("label", { for: "variant" }, "Variant"), variantSelect),
    summary,
    optionsDetails,
    h("button", { type: "submit", class: "primary" }, "Create match"),
    feedback);
  section.append(form);
  let fields = [];

  const game = () => games.find((g) => g.name === gameSelect.value);
  const variant = () => game().variants.find((v) => v.name === variantSelect.value);
  function showVariants() {
    const g = game();
    fill(variantSelect, g.variants.map((v) =>
      h("option", { value: v.name, selected: v.name === g.default_variant }, v.title || v.name)));
    showOptions();
  }
  function showOptions() {
    const v = variant();
    summary.textContent = v.summary || "";
    fields = Object.entries({ ...v.options, ...matchOptions }).map(([name, schema]) => optionField(name, schema));
    fill(optionsBox, h("legend", { class: "sr-only" }, "Options"),
      h("p", { class: "hint" }, "Leave a field empty for the variant's default."), fields.map((f) => f.row));
  }
  gameSelect.addEventListener("change", showVariants);
  variantSelect.addEventListener("change", showOptions);
  showVariants();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const options = {};
    let bad = false;
    for (const f of fields) {
      f.error.textContent = "";
      try {
        const value = f.read();
        if (value !== undefined) options[f.name] = value;
      } catch (exc) {
        f.error.textContent = exc.message;
        bad = true;
      }
    }
    if (bad) {
      optionsDetails.open = true;
      feedback.textContent = "Some options need fixing (see above).";
      return;
    }
    feedback.textContent = "Creating…";
    const created = await api("/matches", { body: { game: game().name, variant: variant().name, options } });
    if (!created.ok) {
      const { code, message } = created.body.error;
      feedback.textContent = `Refused (${code}): ${message}`;
      const named = fields.find((f) => message.includes(`'${f.name}'`) || message.includes(f.name));
      if (code === "bad_options" && named) {
        optionsDetails.open = true;
        named.error.textContent = message;
        named.input.focus();
      }
      return;
    }
    feedback.textContent = "";
    showCreated(createdSection, created.body, game());
  });
}

/** One option's input, built from its JSON Schema; read() gives the value to send
 * (undefined: leave it out, the variant's default). */
function optionField(name, schema) {
  const id = `opt-${name}`;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const main = types.find((t) => t !== "null");
  const error = h("span", { class: "error", id: `${id}-error`, role: "alert" });
  const hint = h("span", { class: "hint", id: `${id}-hint` },
    schema.description || "", schema.default !== undefined && schema.default !== null && typeof schema.default !== "object"
      ? ` (default ${JSON.stringify(schema.default)})` : "");
  const described = `${id}-hint ${id}-error`;
  let input;
  let read;
  if (schema.enum) {
    input = h("select", { id, "aria-describedby": described },
      h("option", { value: "" }, "default"),
      schema.enum.filter((v) => v !== null).map((v) => h("option", { value: JSON.stringify(v) }, String(v))));
    read = () => (input.value === "" ? undefined : JSON.parse(input.value));
  } else if (main === "boolean") {
    input = h("select", { id, "aria-describedby": described },
      h("option", { value: "" }, `default (${schema.default === undefined ? "—" : schema.default ? "yes" : "no"})`),
      h("option", { value: "true" }, "yes"), h("option", { value: "false" }, "no"));
    read = () => (input.value === "" ? undefined : input.value === "true");
  } else if (main === "integer" || main === "number") {
    const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? undefined : undefined);
    input = h("input", {
      id, type: "number", inputmode: main === "integer" ? "numeric" : "decimal",
      step: main === "integer" ? "1" : "any", min, max: schema.maximum,
      placeholder: schema.default ?? "", "aria-describedby": described,
    });
    read = () => {
      if (input.value.trim() === "") return undefined;
      const n = Number(input.value);
      if (!Number.isFinite(n) || (main === "integer" && !Number.isInteger(n))) {
        throw new Error(`${name} is ${main === "integer" ? "a whole number" : "a number"}`);
      }
      return n;
    };
  } else if (main === "string") {
    const long = [schema.default, ...(schema.examples || [])].some((e) => String(e).includes("\n"));
    input = long
      ? h("textarea", { id, rows: 4, "aria-describedby": described, spellcheck: "false" })
      : h("input", { id, type: "text", placeholder: schema.default ?? "", "aria-describedby": described });
    read = () => (input.value.trim() === "" ? undefined : input.value);
  } else {
    // arrays and objects: JSON
    input = h("textarea", { id, rows: 2, placeholder: JSON.stringify(schema.default ?? null), "aria-describedby": described, spellcheck: "false" });
    read = () => {
      if (input.value.trim() === "") return undefined;
      try {
        return JSON.parse(input.value);
      } catch {
        throw new Error(`${name} is JSON, e.g. ${JSON.stringify(schema.default ?? [])}`);
      }
    };
  }
  const row = h("div", { class: "row option" }, h("label", { for: id }, name), input, hint, error);
  return { name, row, input, error, read };
}

function showCreated(section, created, game) {
  const match = created.match;
  const tokens = Array.from({ length: created.seats }, () => randomId(32));
  section.hidden = false;
  fill(section,
    h("h2", { id: "created-h", tabindex: "-1" }, `Match ${match} created`),
    h("p", {}, `${game.title}, ${created.variant}. Send each player the link of a seat: whoever opens it takes that seat `
      + "(its secret is in the part after #, which the browser never sends to a server). "
      + "The match starts when every seat is taken."),
    h("ol", { class: "seat-links", start: 0 }, tokens.map((token, seat) => {
      const link = seatLink(match, seat, token);
      return h("li", {},
        h("span", { class: "seat-no" }, `Seat ${seat}`),
        h("input", { type: "text", readonly: true, value: link, "aria-label": `link of seat ${seat}`, class: "link" }),
        copyButton(link, `copy the link of seat ${seat}`),
        h("a", { href: link, class: "button small", onclick: () => holdSeat(match, seat, token) }, "Play it here"));
    })),
    h("p", {}, "Watch: ", h("a", { href: watchLink(match) }, watchLink(match))),
    h("p", { class: "hint" }, `Commitment (SHA-256 of the secret setup, checkable after the match): ${created.commitment}`));
  section.querySelector("#created-h").focus();
}

function replayForm() {
  const input = h("input", { id: "replay-id", type: "text", autocomplete: "off", spellcheck: "false", required: true });
  const form = h("form", { class: "row" }, h("label", { for: "replay-id" }, "Match id"), input,
    h("button", { type: "submit" }, "Replay"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `replay=${encodeURIComponent(input.value.trim())}`;
  });
  return h("section", { class: "card", "aria-labelledby": "replay-h" },
    h("h2", { id: "replay-h" }, "Replay a finished match"),
    h("p", { class: "hint" }, "Step through it as each player, a spectator or everything, and see its log verified."), form);
}

function listSection(state, title, action) {
  const list = h("ul", { class: "matches", "aria-label": title });
  const more = h("button", { type: "button", class: "small", hidden: true }, "More");
  const note = h("p", { class: "hint" });
  const section = h("section", { class: "card", "aria-labelledby": `${state}-h` },
    h("h2", { id: `${state}-h` }, title), note, list, more);
  let next = null;

  async function page(after, replace) {
    const answer = await api(`/lobby?state=${state}&limit=20${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    if (!answer.ok) {
      note.textContent = answer.body.error.message;
      return;
    }
    const items = answer.body.matches.map((m) => {
      const names = m.seats.filter((s) => s.name).map((s) => s.name);
      const what = state === "waiting"
        ? `${m.free.length} of ${m.seats.length} seats free` + (names.length ? `; seated: ${names.join(", ")}` : "")
        : names.join(", ");
      return h("li", {},
        h("span", { class: "match-title" }, `${m.title}, ${m.variant}`),
        h("span", { class: "hint" }, ` ${m.match}: ${what} `),
        h("a", { href: watchLink(m.match), class: "button small", "aria-label": `${action}: ${m.title} match ${m.match}` }, action));
    });
    if (replace) fill(list, items);
    else list.append(...items);
    next = answer.body.next;
    more.hidden = !next;
    note.textContent = replace && !items.length && !next ? "None at the moment." : "";
  }
  more.addEventListener("click", () => page(next, false));
  return { section, load: () => page(null, true) };
}
