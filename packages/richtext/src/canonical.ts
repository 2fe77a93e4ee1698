/**
 * The canonical form of a document's lines: what the renderer shows, and what `parseHtml` reads back from the
 * renderer's HTML. Any `Y.Text` content, whatever shape concurrent edits left, has one; `repairs` (repairs.ts)
 * lists the writes that make the document equal to it. Never drops or doubles a character: only attribute values
 * change, and short table rows gain empty cells ([RT-T4]).
 */
import { pushText } from './lines.js';
import { sanitizeBlock, sanitizeImageAttrs, sanitizeInline, type BlockAttrs, type Line, type Op } from './schema.js';

export interface CanonicalLine {
  ops: Op[];
  attrs: BlockAttrs;
  /** Index of the source line; absent for a cell added to pad a short row ([RT-T4]). */
  source?: number;
}

/** Inline ops with every attribute checked ([RT-X1]) and equal neighbours merged. Unknown embeds are kept (shown as nothing). */
export function canonicalOps(ops: readonly Op[]): Op[] {
  const out: Op[] = [];
  for (const op of ops) {
    const inline = sanitizeInline(op.attributes) as Record<string, unknown>;
    if (typeof op.insert === 'string') {
      if (op.insert !== '') pushText(out, op.insert, inline);
      continue;
    }
    const attrs = Object.hasOwn(op.insert, 'image') ? { ...inline, ...sanitizeImageAttrs(op.attributes ?? {}) } : inline;
    out.push(Object.keys(attrs).length > 0 ? { insert: op.insert, attributes: attrs } : { insert: op.insert });
  }
  return out;
}

/** Effective blockquote depth of a line (0 outside quotes). */
export function quoteDepth(a: BlockAttrs): number {
  return a.blockquote ? (a['quote-depth'] ?? 1) : 0;
}

/**
 * The canonical lines of `lines`:
 * - [RT-P1] each line's block attributes checked and their conflicts resolved (`sanitizeBlock`; [RT-C1]: a line
 *   holding an embed is no code block);
 * - [RT-L2] a list item is at most one level deeper than the line before it in its list;
 * - [RT-L3] a continuation paragraph needs an open item at its level, and takes that item's list kind;
 * - [RT-T3] the lines of one multi-line cell share its first line's cell attributes; every cell line of a table
 *   shares the first line's `table-style`;
 * - [RT-T4] a row with fewer cells than the table's widest row is padded with empty cells.
 */
export function canonicalLines(lines: readonly Line[]): CanonicalLine[] {
  const base: CanonicalLine[] = lines.map((line, i) => ({
    ops: canonicalOps(line.ops),
    attrs: sanitizeBlock(line.attrs, line.ops.some((op) => typeof op.insert !== 'string')),
    source: i,
  }));
  fixLists(base);
  return fixTables(base);
}

function fixLists(lines: CanonicalLine[]): void {
  // Per run of list lines at one quote depth: the kind of the open item at each level.
  let open: Array<BlockAttrs['list']> = [];
  let depth = -1;
  for (const line of lines) {
    const a = line.attrs;
    if (a.list === undefined) {
      open = [];
      continue;
    }
    const q = quoteDepth(a);
    if (q !== depth) {
      open = [];
      depth = q;
    }
    let level = a.indent ?? 0;
    if (a['list-cont'] && level < open.length) {
      a.list = open[level];
      open.length = level + 1;
    } else {
      delete a['list-cont'];
      level = Math.min(level, open.length);
      open.length = level;
      open.push(a.list);
    }
    if (level === 0) delete a.indent;
    else a.indent = level;
  }
}

/** Cell-level attributes: the same on every line of one cell. */
const CELL_KEYS = ['th', 'colspan', 'rowspan', 'cell-style'] as const;

export interface Cell {
  lines: CanonicalLine[];
  colspan: number;
  rowspan: number;
}
export interface Row {
  id: string;
  cells: Cell[];
}

/** Groups a run of table lines into rows (same `table` value, adjacent) and cells (same `cell` value, adjacent). */
export function tableRows(run: readonly CanonicalLine[]): Row[] {
  const rows: Row[] = [];
  let prevCell: string | undefined;
  for (const line of run) {
    const id = line.attrs.table!;
    let row = rows[rows.length - 1];
    if (!row || row.id !== id) {
      row = { id, cells: [] };
      rows.push(row);
      prevCell = undefined;
    }
    const cellId = line.attrs.cell;
    const last = row.cells[row.cells.length - 1];
    if (last && cellId !== undefined && cellId === prevCell) last.lines.push(line);
    else row.cells.push({ lines: [line], colspan: line.attrs.colspan ?? 1, rowspan: line.attrs.rowspan ?? 1 });
    prevCell = cellId;
  }
  return rows;
}

/** Free grid slots per row: how many empty cells each row needs so that every row spans the table's width. */
export function rowShortfalls(rows: readonly Row[]): number[] {
  const occupied: Array<Set<number>> = rows.map(() => new Set());
  const widths: number[] = [];
  rows.forEach((row, r) => {
    let col = 0;
    for (const cell of row.cells) {
      while (occupied[r]!.has(col)) col++;
      for (let dr = 0; dr < cell.rowspan && r + dr < rows.length; dr++) {
        for (let dc = 0; dc < cell.colspan; dc++) occupied[r + dr]!.add(col + dc);
      }
      col += cell.colspan;
    }
  });
  rows.forEach((_, r) => widths.push(occupied[r]!.size === 0 ? 0 : Math.max(...occupied[r]!) + 1));
  const width = Math.max(0, ...widths);
  return rows.map((_, r) => width - occupied[r]!.size);
}

function fixTables(lines: CanonicalLine[]): CanonicalLine[] {
  const out: CanonicalLine[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.attrs.table === undefined) {
      out.push(lines[i]!);
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j]!.attrs.table !== undefined) j++;
    const run = lines.slice(i, j);
    const tableStyle = run[0]!.attrs['table-style'];
    for (const line of run) {
      if (tableStyle === undefined) delete line.attrs['table-style'];
      else line.attrs['table-style'] = tableStyle;
    }
    const rows = tableRows(run);
    for (const row of rows) {
      for (const cell of row.cells) {
        const first = cell.lines[0]!.attrs;
        for (const line of cell.lines.slice(1)) {
          for (const key of CELL_KEYS) {
            if (first[key] === undefined) delete line.attrs[key];
            else (line.attrs as Record<string, unknown>)[key] = first[key];
          }
        }
      }
    }
    const short = rowShortfalls(rows);
    rows.forEach((row, r) => {
      for (const cell of row.cells) out.push(...cell.lines);
      for (let k = 0; k < short[r]!; k++) {
        const attrs: BlockAttrs = { table: row.id };
        if (tableStyle !== undefined) attrs['table-style'] = tableStyle;
        out.push({ ops: [], attrs });
      }
    });
    i = j;
  }
  return out;
}
