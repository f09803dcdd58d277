/**
 * Project slugs, as Laravel's `Str::slug($name)` makes them: transliterate to ASCII, turn `_` into
 * `-`, `@` into `-at-`, drop other punctuation, lower-case, collapse runs of `-` and whitespace
 * into one `-`, trim `-`. Worklane adds a length cap and a fallback for names with nothing left.
 */

export const MAX_SLUG_LENGTH = 250;
export const EMPTY_SLUG = 'project';

/**
 * Letters that Unicode decomposition does not reduce to ASCII, with the transliterations of
 * Laravel's ASCII tables (voku/portable-ascii, language "en"), in lower case.
 */
const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  // Latin
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ħ: 'h',
  ı: 'i',
  ĸ: 'k',
  ŋ: 'n',
  ŧ: 't',
  ƒ: 'f',
  ə: 'e',
  ǝ: 'e',
  // Greek
  α: 'a',
  β: 'b',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'ks',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'x',
  ψ: 'ps',
  ω: 'w',
  // Cyrillic
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  є: 'ye',
  ж: 'zh',
  з: 'z',
  и: 'i',
  і: 'i',
  ї: 'yi',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
  ђ: 'dj',
  ј: 'j',
  љ: 'lj',
  њ: 'nj',
  ћ: 'c',
  џ: 'dz',
};

const COMBINING_MARK = /\p{M}/u;
const WHITESPACE = /\s/u;
const NON_ASCII = /[^\x00-\x7f]/;

/** A letter from the table, keeping an upper-case initial as `Str::ascii` does (`Ж` -> `Zh`). */
function tableEntry(character: string): string | undefined {
  const lower = character.toLowerCase();
  const mapped = TRANSLITERATIONS[lower];
  if (mapped === undefined || lower === character) return mapped;
  return mapped.charAt(0).toUpperCase() + mapped.slice(1);
}

/** Laravel's `Str::ascii` for the letters above; characters with no ASCII form are dropped. */
export function transliterate(text: string): string {
  let ascii = '';
  for (const character of text.normalize('NFC')) {
    if (WHITESPACE.test(character)) {
      ascii += ' ';
      continue;
    }
    const direct = tableEntry(character);
    if (direct !== undefined) {
      ascii += direct;
      continue;
    }
    for (const part of character.normalize('NFKD')) {
      if (COMBINING_MARK.test(part)) continue;
      const mapped = tableEntry(part) ?? part;
      if (!NON_ASCII.test(mapped)) ascii += mapped;
    }
  }
  return ascii;
}

/** The slug of `name` before any suffix is added to make it unique; never empty. */
export function slugify(name: string): string {
  const slug = transliterate(name)
    .toLowerCase()
    .replace(/_+/g, '-')
    .replace(/@/g, '-at-')
    .replace(/[^-a-z0-9\s]+/g, '')
    .replace(/[-\s]+/g, '-')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/^-+|-+$/g, '');
  return slug === '' ? EMPTY_SLUG : slug;
}

/**
 * The n-th candidate for `base` (n = 0 is `base` itself, then `base-1`, `base-2`...), shortened
 * so that the suffix still fits in MAX_SLUG_LENGTH.
 */
export function slugCandidate(base: string, n: number): string {
  if (n === 0) return base;
  const suffix = `-${n}`;
  return `${base.slice(0, MAX_SLUG_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** Longest suffix the candidates of one name can carry: `-` and up to 16 digits. */
const MAX_SUFFIX_LENGTH = 17;

/** A prefix every candidate of `base` starts with, to find the slugs already taken in one range scan. */
export function slugCandidatePrefix(base: string): string {
  return base.slice(0, MAX_SLUG_LENGTH - MAX_SUFFIX_LENGTH).replace(/-+$/, '');
}
