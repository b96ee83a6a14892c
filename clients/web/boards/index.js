// The games with a board of their own (boards/<game>.js). A game added with its board
// is named here too; any other game is shown on the generic board (boards/generic.js).
export const BOARDS = ["five-card-trick", "memory-maze", "keys-to-success", "escalator", "labyrinth"];

/** The board module of `game`: its own, or the generic one. */
export async function boardOf(game) {
  const name = BOARDS.includes(game) ? game : "generic";
  return (await import(`./${name}.js`)).default;
}
