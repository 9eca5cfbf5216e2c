// "Did you mean ...?" for a misspelt name (a command, an option, a field): the known name closest
// to it by edit distance, when it is close enough to be a typo rather than another word.

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  // Optimal string alignment distance; names are short, so the full table is cheap.
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: columns }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < columns; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(table[i - 1]![j]! + 1, table[i]![j - 1]! + 1, table[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, table[i - 2]![j - 2]! + 1);
      table[i]![j] = best;
    }
  }
  return table[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, if it is within a typo's reach: a different letter case, or
 * at most one edit per three letters (at least one, at most three; none for three letters or
 * fewer). Ties go to the first.
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  // Three letters or fewer are too short to tell a typo from another word (mcp is not tcp).
  const limit = word.length <= 3 ? 0 : Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** " (did you mean X?)"-style suffix text, or "" when nothing is close. */
export function didYouMean(
  word: string,
  candidates: Iterable<string>,
  render: (name: string) => string = (name) => name,
): string {
  const closest = closestName(word, candidates);
  return closest === undefined ? '' : `did you mean ${render(closest)}?`;
}
