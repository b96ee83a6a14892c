// One viewer's websocket to one match, as docs/protocol.md describes it: a hello with
// `since` (the seq of the last update seen), the updates that follow it, and on a lost
// connection a new hello from the same point, with every command still unanswered sent
// again under its own id. Updates are numbered 1, 2, 3, ... per viewer: an update already
// seen is dropped, a gap starts the hello again, so a board gets each update once, in
// order, whatever happens to the connection.

const RETRY_MS = [250, 500, 1000, 2000, 4000];
// Close codes after which saying hello again would be refused the same way.
const FINAL_CLOSES = new Map([
  [4009, "this seat holds as many connections as it may: close another tab of it"],
  [4010, "the match expired before its seats were taken"],
]);

export function randomId(length = 32) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

export function wsUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

export class MatchConnection {
  /**
   * @param {string} match the match id
   * @param {{token?: string|null, full?: boolean, url?: string}} how
   * Listeners: onWelcome(frame), onUpdate(frame), onResync(frame), onError(frame),
   * onStatus(text, state) with state "connecting" | "open" | "closed" | "final".
   */
  constructor(match, { token = null, full = false, url = wsUrl() } = {}) {
    this.match = match;
    this.token = token;
    this.full = full;
    this.url = url;
    this.lastSeq = 0; // the seq of the last update shown: the `since` of the next hello
    this.view = null;
    this.welcome = null;
    this.received = []; // the seq of every update handed on, in order (no gap, no repeat)
    this.pending = new Map(); // command id -> {frame, resolve}
    this.prefix = randomId(8);
    this.counter = 0;
    this.ws = null;
    this.attempt = 0;
    this.stopped = false;
    this.holdUntil = 0;
    this.timer = null;
    this.listeners = {};
    this.skew = 0; // server time minus local time, from the latest update's ts
    this.trace = []; // what happened to the connection, for a person or a test to read
    // The server's signed receipts and the digests its acks gave, in the order received:
    // a player keeps them to hold the match's log against later (docs/fairness.md;
    // `receiptsText()` is what `daedalus replay LOG --verify --receipts FILE` reads).
    this.receipts = [];
  }

  keepReceipt(receipt) {
    if (!receipt || typeof receipt !== "object") return;
    const line = JSON.stringify({ type: "receipt", ...receipt });
    if (!this.receipts.some((r) => JSON.stringify(r) === line)) this.receipts.push(JSON.parse(line));
  }

  /** The receipts as a file: one JSON object a line. */
  receiptsText() {
    return this.receipts.map((r) => JSON.stringify(r)).join("\n") + (this.receipts.length ? "\n" : "");
  }

  note(what) {
    this.trace.push(`${new Date().toISOString().slice(11, 23)} ${what}`);
    if (this.trace.length > 200) this.trace.shift();
  }

  on(name, fn) {
    this.listeners[name] = fn;
    return this;
  }

  emit(name, ...args) {
    const fn = this.listeners[name];
    if (fn) fn(...args);
  }

  status(text, state) {
    this.state = state;
    this.emit("onStatus", text, state);
  }

  connect() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const wait = this.holdUntil - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => this.connect(), wait);
      return;
    }
    this.status(this.attempt ? "reconnecting…" : "connecting…", "connecting");
    // The match in the URL: a server of several workers serves it from its match's worker.
    const ws = new WebSocket(`${this.url}?match=${encodeURIComponent(this.match)}`);
    this.ws = ws;
    this.joined = false;
    ws.onopen = () => {
      this.note(`open, hello since ${this.sinceNow ? "now" : this.lastSeq}`);
      const hello = { type: "hello", match: this.match, since: this.sinceNow ? "now" : this.lastSeq };
      if (this.token) hello.token = this.token;
      if (this.full) hello.full = true;
      this.sinceNow = false;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      this.receive(frame, ws);
    };
    ws.onclose = (event) => {
      this.note(`closed ${event.code} ${event.reason}`);
      if (this.ws !== ws) return;
      this.ws = null;
      const final = FINAL_CLOSES.get(event.code);
      if (final || this.stopped) {
        this.stopped = true;
        this.status(final || "closed", "final");
        return;
      }
      this.retry();
    };
  }

  retry() {
    const delay = RETRY_MS[Math.min(this.attempt, RETRY_MS.length - 1)];
    this.attempt += 1;
    this.status(`connection lost: reconnecting in ${Math.round(delay / 100) / 10} s`, "closed");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  receive(frame, ws) {
    switch (frame.type) {
      case "welcome":
        this.note(`welcome seq ${frame.seq} after ${this.lastSeq}`);
        this.joined = true;
        this.attempt = 0;
        this.welcome = frame;
        this.view = frame.view;
        this.keepReceipt(frame.receipt);
        if (this.sinceNowTaken) this.lastSeq = frame.seq;
        this.sinceNowTaken = false;
        this.status("connected", "open");
        this.emit("onWelcome", frame);
        // Commands sent before the connection was lost, and not answered: again, same id.
        for (const { frame: command } of this.pending.values()) ws.send(JSON.stringify(command));
        break;
      case "update":
        if (frame.seq <= this.lastSeq) return; // seen already
        if (frame.seq !== this.lastSeq + 1) {
          this.note(`gap: update ${frame.seq} after ${this.lastSeq}`);
          ws.close(); // a gap: say hello again from the last update seen
          return;
        }
        this.lastSeq = frame.seq;
        this.received.push(frame.seq);
        this.keepReceipt(frame.receipt);
        this.view = frame.view;
        if (typeof frame.ts === "number") this.skew = frame.ts - Date.now();
        this.emit("onUpdate", frame);
        break;
      case "resync":
        this.received = this.received.filter((seq) => seq <= frame.kept);
        this.lastSeq = frame.seq;
        this.view = frame.view;
        this.emit("onResync", frame);
        break;
      case "receipt":
        this.keepReceipt(frame);
        break;
      case "ack":
        if (typeof frame.digest === "string") {
          this.receipts.push({ type: "ack", match: this.match, seat: this.welcome ? this.welcome.seat : null,
                               id: frame.id, digest: frame.digest });
        }
        this.settle(frame);
        break;
      case "rejected":
        this.settle(frame);
        break;
      case "error":
        this.note(`error ${frame.code} ${frame.message}`);
        if (frame.code === "bad_since") {
          // The stream was numbered again while away: start from the view now.
          this.sinceNow = true;
          this.sinceNowTaken = true;
          ws.close();
          return;
        }
        if (frame.code === "store_unavailable" && !frame.id) {
          ws.close(); // a hello the store could not answer: say it again in a moment
          return;
        }
        if (frame.code === "busy" && frame.id && this.pending.has(frame.id)) {
          const { frame: command } = this.pending.get(frame.id);
          setTimeout(() => this.ws && this.joined && this.ws.send(JSON.stringify(command)), 300);
          return;
        }
        if (frame.id && this.pending.has(frame.id)) this.settle(frame);
        if (["unknown_match", "bad_token", "match_expired", "match_not_over"].includes(frame.code)) {
          this.stopped = true;
          this.status(frame.message, "final");
        }
        this.emit("onError", frame);
        break;
      default:
        break;
    }
  }

  settle(frame) {
    const waiting = this.pending.get(frame.id);
    if (!waiting) return;
    this.pending.delete(frame.id);
    waiting.resolve(frame);
  }

  /** Send a game command; resolves with its ack, rejected, or error frame. */
  send(command) {
    this.counter += 1;
    const id = `${this.prefix}-${this.counter}`;
    const frame = { type: "command", id, command };
    return new Promise((resolve) => {
      this.pending.set(id, { frame, resolve });
      if (this.ws && this.joined && this.ws.readyState === WebSocket.OPEN) {
        this.ws.send(JSON.stringify(frame));
      }
    });
  }

  /** Cut the connection as a network would (for tests): reconnect after `holdMs`. */
  drop(holdMs = 0) {
    this.holdUntil = Date.now() + holdMs;
    if (this.ws) this.ws.close();
  }

  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }

  /** Server time now, as well as this page can tell it. */
  serverNow() {
    return Date.now() + this.skew;
  }
}
