// A sichuan-bot/1 bot in JavaScript for Node (docs/protocol.md): one JSON message per
// line on stdin, one answer per request on stdout. Stateless: every request carries the
// seat's whole view.
//
// Strategy: declare Hu when legal; choose as forbidden suit the suit with the fewest
// tiles (its indicator card when offered); on its turn discard a tile of its forbidden
// suit first, else the tile with the fewest neighbours (tiles of its suit at most two
// ranks away); pass every claim.
//
// Run: exec:node examples/bots/simple_bot.js?tables=64
"use strict";
const readline = require("readline");

const SUITS = "mps";
const kind = (t) => SUITS.indexOf(t[1]) * 9 + Number(t[0]) - 1;

function choose(view, legal) {
  if (legal.includes("hu")) return "hu";
  const counts = new Array(27).fill(0);
  for (const t of view.hand) counts[kind(t)] += 1;
  const perSuit = [0, 1, 2].map((s) => counts.slice(9 * s, 9 * s + 9).reduce((a, b) => a + b));
  const voids = legal.filter((a) => a.startsWith("void "));
  if (voids.length) {
    const fewest = perSuit.indexOf(Math.min(...perSuit));
    return voids.find((a) => a === `void ${SUITS[fewest]}`)
      || voids.find((a) => a.length === 7 && a[6] === SUITS[fewest])
      || voids[0];
  }
  const discards = legal.filter((a) => a.startsWith("discard "));
  if (!discards.length) return legal.includes("pass") ? "pass" : legal[0];
  const myVoid = view.void[view.seat];
  let best = discards[0];
  let bestScore = Infinity;
  for (const a of discards) {
    const k = kind(a.slice(8));
    let score = -1; // the tile itself is not its own neighbour
    for (let d = -2; d <= 2; d++) {
      const r = (k % 9) + d;
      if (r >= 0 && r < 9) score += counts[k + d];
    }
    if (a[9] === myVoid) score -= 100; // tiles of the forbidden suit go first
    if (score < bestScore) { best = a; bestScore = score; }
  }
  return best;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    console.log(JSON.stringify({ type: "hello", protocol: "sichuan-bot/1", name: "simple-js",
                                 version: "1", tables: 64 }));
  } else if (msg.type === "request") {
    console.log(JSON.stringify({ id: msg.id, action: choose(msg.view, msg.legal) }));
  } else if (msg.type === "bye") {
    rl.close();
  }
});
