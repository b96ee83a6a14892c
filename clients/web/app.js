// The browser client: the lobby at `/#`, a match at `/#match=ID` (watching) or
// `/#match=ID&seat=N&token=T` (a seat link: the token stays in the fragment, which the
// browser never sends to a server). Plain ES modules; no build step.

import { showLobby } from "./lobby.js";
import { showMatch } from "./match.js";
import { showReplay } from "./replay.js";

let current = null; // the page shown: {close()}

function route() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const root = document.getElementById("app");
  if (current && current.close) current.close();
  current = null;
  root.replaceChildren();
  const match = params.get("match");
  const replay = params.get("replay");
  const number = (name) => (params.has(name) && /^\d+$/.test(params.get(name)) ? Number(params.get(name)) : null);
  if (replay) {
    current = showReplay(root, {
      match: replay, as: params.get("as"), round: number("round"), n: number("n"), audit: params.get("audit"),
    });
  } else if (match) {
    current = showMatch(root, {
      match,
      seat: params.has("seat") ? Number(params.get("seat")) : null,
      token: params.get("token"),
      board: params.get("board"), // "generic": the state as the server sends it, any game
    });
  } else {
    current = showLobby(root);
  }
  window.daedalus = current; // for tests and the curious: the page's state
}

window.addEventListener("hashchange", route);
route();
