// Small helpers shared by the pages and the boards: building elements, saying things to
// screen readers, the clock's words, and the seats this browser holds.

/** h("button", {class: "x", onclick: fn}, "text", child, ...): an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Tell screen readers something (the page's polite live region). */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/** "1:05", "12 s", "3 h 02 min": a duration in milliseconds, for a clock. */
export function duration(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  const hours = Math.floor(s / 3600);
  if (hours < 48) return `${hours} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} days`;
}

/** A word with its plural: plural(2, "chip") -> "2 chips". */
export function plural(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

/** "Black (seat 0)" */
export function seatName(view, seat) {
  if (seat === null || seat === undefined) return "nobody";
  const s = view.seats.find((x) => x.seat === seat);
  const name = s && s.name ? s.name : "free";
  return `${name} (seat ${seat})`;
}

// The seats this browser holds, by match: {seat, token}. Kept in localStorage so that a
// reload or a new tab takes the seat back; the token never leaves the browser but in a
// hello and a seat claim.
const KEY = (match) => `daedalus.seat.${match}`;

export function heldSeat(match) {
  try {
    const raw = localStorage.getItem(KEY(match));
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

export function holdSeat(match, seat, token) {
  try {
    localStorage.setItem(KEY(match), JSON.stringify({ seat, token }));
  } catch {
    // private mode: the link still holds the token
  }
}

/** The link that takes a seat (its token in the fragment, never in the query string). */
export function seatLink(match, seat, token) {
  return `${location.origin}/#match=${encodeURIComponent(match)}&seat=${seat}&token=${encodeURIComponent(token)}`;
}

export function watchLink(match) {
  return `${location.origin}/#match=${encodeURIComponent(match)}`;
}

/** JSON over HTTP: resolves with {ok, status, body}; an error body is {error: {code, message}}. */
export async function api(path, init = {}) {
  const headers = { Accept: "application/json" };
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method: init.method || (init.body !== undefined ? "POST" : "GET"),
      headers,
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    });
  } catch (exc) {
    return { ok: false, status: 0, body: { error: { code: "network", message: `the server did not answer (${exc.message})` } } };
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = { error: { code: "bad_answer", message: `HTTP ${response.status}` } };
  }
  return { ok: response.ok, status: response.status, body };
}

/** A copy-to-clipboard button for `text`, that says when it copied. */
export function copyButton(text, label) {
  const button = h("button", { type: "button", class: "small", "aria-label": label }, "Copy");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy the link";
    }
    setTimeout(() => {
      button.textContent = "Copy";
    }, 2000);
  });
  return button;
}
