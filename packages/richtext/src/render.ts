/**
 * Lines → HTML: deterministic (the same lines give the same string, in every editor and on the server), every text
 * and attribute value escaped, every value re-checked ([RT-X1]). Renders the canonical form (canonical.ts), so any
 * shape concurrent edits leave renders as valid HTML, with every character once.
 */
import { canonicalLines, quoteDepth, tableRows, type CanonicalLine } from './canonical.js';
import { sanitizeEmbed, type BlockAttrs, type Line, type Op } from './schema.js';

export interface RenderOptions {
  /**
   * A list item that begins with a nested list is rendered with a placeholder `<br>` on its empty first line
   * (`<li><br><ul>…`), for an editor that would otherwise move the nested list into the item before (TinyMCE).
   * Off: `<li><ul>…`. Both read back as the same lines ([RT-L4]).
   */
  lineBeforeLeadingList?: boolean;
  /** Attributes of the placeholder `<br>` that gives an empty line its height (e.g. TinyMCE's `data-mce-bogus`). */
  placeholder?: Readonly<Record<string, string>>;
}

export function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;');
}

export function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;');
}

function attrString(attrs: ReadonlyArray<readonly [string, string | undefined]>): string {
  let s = '';
  for (const [k, v] of attrs) if (v !== undefined && v !== '') s += ` ${k}="${escapeAttr(v)}"`;
  return s;
}

/** The HTML of a document's lines. */
export function renderHtml(lines: readonly Line[], options: RenderOptions = {}): string {
  return new Renderer(options).blocks(canonicalLines(lines), 0);
}

/**
 * Plain text: one line per line of the document (a table cell's line included), an in-block break as a line break,
 * an image as nothing ([RT-R3]).
 */
export function renderText(lines: readonly Line[]): string {
  return lines
    .map((line) => line.ops.map((op) => (typeof op.insert === 'string' ? op.insert : op.insert['break'] === true ? '\n' : '')).join(''))
    .join('\n');
}

/** Inline formats in nesting order, outermost first ([RT-R2]). */
const MARKS: ReadonlyArray<{ key: string; open: (v: unknown) => string; close: string }> = [
  { key: 'link', open: (v) => `<a href="${escapeAttr(String(v))}">`, close: '</a>' },
  { key: 'bold', open: () => '<strong>', close: '</strong>' },
  { key: 'italic', open: () => '<em>', close: '</em>' },
  { key: 'underline', open: () => '<u>', close: '</u>' },
  { key: 'strike', open: () => '<s>', close: '</s>' },
  { key: 'script', open: (v) => (v === 'sub' ? '<sub>' : '<sup>'), close: '' },
  { key: 'code', open: () => '<code>', close: '</code>' },
  { key: 'color', open: (v) => `<span style="color: ${escapeAttr(String(v))};">`, close: '</span>' },
  { key: 'background', open: (v) => `<span style="background-color: ${escapeAttr(String(v))};">`, close: '</span>' },
];

/**
 * A line's spaces as a browser's contenteditable spells them, so that each shows ([RT-R4]): a space at the
 * start or end of the line, next to an in-block break, or right after a shown space is a no-break space; the
 * others plain spaces (Chromium's whitespace rebalancing). The document holds plain spaces only.
 */
export function spellSpaces(ops: readonly Op[]): Op[] {
  const units: string[] = [];
  for (const op of ops) {
    if (typeof op.insert !== 'string') units.push(op.insert['break'] === true ? '\n' : '\ufffc');
    else for (const c of op.insert) units.push(c);
  }
  let afterSpace = false;
  for (let i = 0; i < units.length; i++) {
    if (units[i] !== ' ') {
      afterSpace = false;
      continue;
    }
    const lineStart = i === 0 || units[i - 1] === '\n';
    const lineEnd = i === units.length - 1 || units[i + 1] === '\n';
    if (afterSpace || lineStart || lineEnd) {
      units[i] = '\u00a0';
      afterSpace = false;
    } else afterSpace = true;
  }
  let pos = 0;
  return ops.map((op) => {
    if (typeof op.insert !== 'string') {
      pos++;
      return op;
    }
    const n = [...op.insert].length;
    const spelled = units.slice(pos, pos + n).join('');
    pos += n;
    return { ...op, insert: spelled };
  });
}

class Renderer {
  constructor(readonly options: RenderOptions) {}

  placeholder(): string {
    return `<br${attrString(Object.entries(this.options.placeholder ?? {}))}>`;
  }

  /** Inline content with marks nested in MARKS order, sharing open elements between neighbouring ops. */
  inline(ops: readonly Op[], pre: boolean): string {
    let out = '';
    const stack: Array<{ key: string; close: string }> = [];
    let endsWithBreak = true;
    for (const op of pre ? ops : spellSpaces(ops)) {
      let html: string;
      if (typeof op.insert === 'string') {
        html = escapeText(op.insert);
        endsWithBreak = false;
      } else {
        const embed = sanitizeEmbed(op.insert);
        if (embed === null) continue;
        if ('break' in embed) {
          html = '<br>';
          endsWithBreak = true;
        } else {
          const a = op.attributes ?? {};
          html = `<img${attrString([
            ['src', embed.image], ['alt', a['alt'] as string | undefined], ['width', a['width'] as string | undefined],
            ['height', a['height'] as string | undefined], ['style', a['style'] as string | undefined], ['class', a['class'] as string | undefined],
          ])}>`;
          endsWithBreak = false;
        }
      }
      const wanted = MARKS.filter((m) => op.attributes?.[m.key] !== undefined && op.attributes[m.key] !== null).map((m) => ({
        key: `${m.key}=${JSON.stringify(op.attributes![m.key])}`,
        open: m.open(op.attributes![m.key]),
        close: m.key === 'script' ? (op.attributes![m.key] === 'sub' ? '</sub>' : '</sup>') : m.close,
      }));
      let keep = 0;
      while (keep < stack.length && keep < wanted.length && stack[keep]!.key === wanted[keep]!.key) keep++;
      while (stack.length > keep) out += stack.pop()!.close;
      for (const w of wanted.slice(keep)) {
        out += w.open;
        stack.push({ key: w.key, close: w.close });
      }
      out += html;
    }
    while (stack.length > 0) out += stack.pop()!.close;
    // An empty line, or one ending in a break, needs a placeholder <br> to have height ([RT-R5]).
    if (endsWithBreak) out += this.placeholder();
    return out;
  }

  blockStyle(a: BlockAttrs): string {
    let s = '';
    if (a.align !== undefined) s += `text-align: ${a.align}; `;
    if (a['margin-left'] !== undefined) s += `margin-left: ${a['margin-left']}; `;
    if (a['padding-left'] !== undefined) s += `padding-left: ${a['padding-left']}; `;
    return attrString([['style', s.trim()]]);
  }

  /** Lines at quote depth ≥ `depth` ([RT-Q1], [RT-Q2]): nested quotes, tables, lists, code blocks, paragraphs. */
  blocks(lines: readonly CanonicalLine[], depth: number): string {
    let out = '';
    let i = 0;
    while (i < lines.length) {
      const a = lines[i]!.attrs;
      const run = (pred: (x: BlockAttrs) => boolean): CanonicalLine[] => {
        let j = i;
        while (j < lines.length && pred(lines[j]!.attrs)) j++;
        const r = lines.slice(i, j);
        i = j;
        return r;
      };
      if (quoteDepth(a) > depth) {
        out += `<blockquote>${this.blocks(run((x) => quoteDepth(x) > depth), depth + 1)}</blockquote>`;
      } else if (a.table !== undefined) {
        out += this.table(run((x) => x.table !== undefined));
      } else if (a.list !== undefined) {
        out += this.lists(run((x) => x.list !== undefined && quoteDepth(x) === depth));
      } else if (a['code-block'] !== undefined) {
        out += this.code(run((x) => x['code-block'] !== undefined && x.list === undefined && quoteDepth(x) === depth));
      } else {
        out += this.paragraph(lines[i]!);
        i++;
      }
    }
    return out;
  }

  paragraph(line: CanonicalLine): string {
    const tag = line.attrs.header !== undefined ? `h${line.attrs.header}` : 'p';
    return `<${tag}${this.blockStyle(line.attrs)}>${this.inline(line.ops, false)}</${tag}>`;
  }

  /** Consecutive code-block lines are one `<pre>`, lines joined by "\n" ([RT-C1]). */
  code(lines: readonly CanonicalLine[]): string {
    const body = lines.map((l) => (l.ops.length === 0 ? '' : this.inline(l.ops, true))).join('\n');
    // The HTML parser drops one newline right after <pre>: a leading empty line needs another. An empty last line
    // needs a placeholder to show (and the reader drops a trailing one).
    const lead = body.startsWith('\n') ? '\n' : '';
    const tail = lines[lines.length - 1]!.ops.length === 0 ? this.placeholder() : '';
    return `<pre${this.blockStyle(lines[0]!.attrs)}>${lead}${body}${tail}</pre>`;
  }

  /**
   * The lines of one list item or cell, between nested lists: one plain line is inline content of its container;
   * more lines, or a line with a header or alignment, are each a paragraph ([RT-L5]).
   */
  segment(lines: readonly CanonicalLine[], allowHeader: boolean): string {
    const only = lines[0]!;
    const plain = (a: BlockAttrs) => a.align === undefined && (!allowHeader || a.header === undefined);
    if (lines.length === 1 && plain(only.attrs)) return this.inline(only.ops, false);
    return lines
      .map((l) => {
        const tag = allowHeader && l.attrs.header !== undefined ? `h${l.attrs.header}` : 'p';
        return `<${tag}${attrString([['style', l.attrs.align === undefined ? undefined : `text-align: ${l.attrs.align};`]])}>${this.inline(l.ops, false)}</${tag}>`;
      })
      .join('');
  }

  /**
   * A run of list lines at one quote depth → nested `<ul>`/`<ol>` ([RT-L1]): an item at indent n+1 opens a list
   * inside the item before; a change of kind at one level starts a new list; a `list-cont` line is a further
   * paragraph of the open item ([RT-L3]). Indents are already valid (canonical.ts, [RT-L2]).
   */
  lists(lines: readonly CanonicalLine[]): string {
    interface Item { parts: Array<CanonicalLine[] | List>; first: CanonicalLine }
    interface List { kind: string; items: Item[] }
    const top: List[] = [];
    const stack: List[] = [];
    for (const line of lines) {
      const level = line.attrs.indent ?? 0;
      const kind = line.attrs.list!;
      if (line.attrs['list-cont']) {
        stack.length = level + 1;
        const item = stack[level]!.items[stack[level]!.items.length - 1]!;
        const last = item.parts[item.parts.length - 1];
        if (Array.isArray(last)) last.push(line);
        else item.parts.push([line]);
        continue;
      }
      stack.length = Math.min(stack.length, level + 1);
      const item: Item = { parts: [[line]], first: line };
      const same = stack[level];
      if (same && listTag(same.kind) === listTag(kind) && isCheck(same.kind) === isCheck(kind)) {
        same.items.push(item);
        continue;
      }
      const list: List = { kind, items: [item] };
      if (level === 0) top.push(list);
      else {
        const parent = stack[level - 1]!.items[stack[level - 1]!.items.length - 1]!;
        parent.parts.push(list);
      }
      stack[level] = list;
    }
    const renderList = (list: List): string => {
      const tag = listTag(list.kind);
      let s = `<${tag}>`;
      for (const item of list.items) {
        const checked = item.first.attrs.list === 'checked' ? 'true' : item.first.attrs.list === 'unchecked' ? 'false' : undefined;
        s += `<li${attrString([['data-checked', checked]])}>`;
        item.parts.forEach((part, k) => {
          if (!Array.isArray(part)) {
            s += renderList(part);
            return;
          }
          const leading = k === 0 && part.length === 1 && part[0]!.ops.length === 0 && part[0]!.attrs.align === undefined && item.parts.length > 1;
          if (leading && !this.options.lineBeforeLeadingList) return;
          s += this.segment(part, false);
        });
        s += `</li>`;
      }
      return `${s}</${tag}>`;
    };
    return top.map(renderList).join('');
  }

  /** A run of table lines → one table of rows of cells ([RT-T1], [RT-T2]); short rows arrive padded ([RT-T4]). */
  table(lines: readonly CanonicalLine[]): string {
    let s = `<table${attrString([['style', lines[0]!.attrs['table-style']]])}><tbody>`;
    for (const row of tableRows(lines)) {
      s += '<tr>';
      for (const cell of row.cells) {
        const a = cell.lines[0]!.attrs;
        const tag = a.th ? 'th' : 'td';
        const attrs = attrString([
          ['colspan', a.colspan === undefined ? undefined : String(a.colspan)],
          ['rowspan', a.rowspan === undefined ? undefined : String(a.rowspan)],
          ['style', a['cell-style']],
        ]);
        s += `<${tag}${attrs}>${this.segment(cell.lines, true)}</${tag}>`;
      }
      s += '</tr>';
    }
    return `${s}</tbody></table>`;
  }
}

const listTag = (kind: string) => (kind === 'ordered' ? 'ol' : 'ul');
const isCheck = (kind: string) => kind === 'checked' || kind === 'unchecked';
