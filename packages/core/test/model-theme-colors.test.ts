import { describe, expect, it } from 'vitest';
import { MAX_COLOR_LENGTH, StatusPageCreateSchema, StatusPageUpdateSchema, THEME_COLOR_FIELDS } from '../src/model/status-page.js';
import { accepts, issuesOf } from './assertions.js';

/** An rgb() colour of exactly `length` characters: its arguments padded with spaces. */
const rgbOf = (length: number) => `rgb(${' '.repeat(length - 'rgb(0,0,0)'.length)}0,0,0)`;
const page = (theme: 'light' | 'dark', field: string, color: string) => ({ name: 'Acme', url: 'acme', themeColors: { [theme]: { [field]: color } } });

describe('theme colours have a maximum of 64 characters', () => {
  it('states 64, room for the longest real rgba()/hsla() value', () => {
    expect(MAX_COLOR_LENGTH).toBe(64);
    expect(accepts(StatusPageCreateSchema, page('light', 'linkFontColor', 'hsla(359.999, 100.000%, 100.000%, 0.999)'))).toBe(true);
  });

  it.each(['light', 'dark'] as const)('%s: every colour at 64 characters is accepted, at 65 refused naming the field', (theme) => {
    for (const field of THEME_COLOR_FIELDS) {
      expect(rgbOf(64)).toHaveLength(64);
      expect(accepts(StatusPageCreateSchema, page(theme, field, rgbOf(64))), field).toBe(true);
      expect(issuesOf(StatusPageCreateSchema, page(theme, field, rgbOf(65)))).toEqual([
        { path: `themeColors.${theme}.${field}`, message: 'must be at most 64 characters' },
      ]);
    }
  });

  it('a 200,000-character colour is refused on create and update, and promptly', () => {
    const huge = rgbOf(200_000);
    for (const schema of [StatusPageCreateSchema, StatusPageUpdateSchema]) {
      const started = Date.now();
      const issues = issuesOf(schema, page('dark', 'bodyBackgroundColor', huge));
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(issues).toEqual([{ path: 'themeColors.dark.bodyBackgroundColor', message: 'must be at most 64 characters' }]);
    }
  });

  it('a long run of blanks that is no colour is refused for its length and its syntax, in linear time', () => {
    const started = Date.now();
    const issues = issuesOf(StatusPageCreateSchema, page('light', 'borderColor', `rgb(${' '.repeat(100_000)}x`));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(issues.map((i) => i.path)).toEqual(['themeColors.light.borderColor', 'themeColors.light.borderColor']);
    expect(issues.map((i) => i.message)).toEqual(['must be at most 64 characters', expect.stringMatching(/^must be a CSS colour/)]);
  });
});
