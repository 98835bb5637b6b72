import sharp from 'sharp';
import { escapeHtml } from '../../mail/templates.js';
import type { Random } from './random.js';

/**
 * Generated "photos" for the demo: an SVG scene (sky, hills, buildings with windows, trees, ground) rendered to a
 * 1600×1067 JPEG by sharp. Each project has its own light (`Look`); each picture its own scene and layout.
 */

const WIDTH = 1600;
const HEIGHT = 1067;
const HORIZON = 760;

/** The time of day a project is "photographed" at, and the tint of its buildings. */
export type Look = { light: keyof typeof LIGHTS; hue: number };
/** What a picture shows: towers, a street of houses, the pool, or a low plaza in front of towers. */
export type Scene = 'skyline' | 'houses' | 'pool' | 'plaza';

type Light = { skyTop: string; skyHorizon: string; sun: string; sunY: number; glow: number; dark: boolean };
const LIGHTS = {
  day: { skyTop: 'hsl(208, 68%, 46%)', skyHorizon: 'hsl(198, 62%, 86%)', sun: '#fffbe8', sunY: 160, glow: 0.5, dark: false },
  golden: { skyTop: 'hsl(218, 48%, 42%)', skyHorizon: 'hsl(36, 92%, 72%)', sun: '#ffd27a', sunY: 560, glow: 0.8, dark: false },
  dusk: { skyTop: 'hsl(238, 42%, 18%)', skyHorizon: 'hsl(16, 78%, 58%)', sun: '#ff9b5e', sunY: 700, glow: 0.7, dark: true },
  dawn: { skyTop: 'hsl(205, 48%, 58%)', skyHorizon: 'hsl(332, 62%, 86%)', sun: '#fff0e0', sunY: 620, glow: 0.6, dark: false },
} satisfies Record<string, Light>;

export const LOOKS = Object.keys(LIGHTS) as Look['light'][];

const hsl = (h: number, s: number, l: number) => `hsl(${Math.round(((h % 360) + 360) % 360)}, ${Math.round(s)}%, ${Math.round(l)}%)`;
const rect = (x: number, y: number, w: number, h: number, fill: string, extra = '') =>
  `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="${fill}"${extra}/>`;

function sky(light: Light, random: Random): string {
  const sunX = random.between(200, WIDTH - 200);
  const clouds = Array.from({ length: random.int(2, 6) }, () => {
    const x = random.between(0, WIDTH);
    const y = random.between(60, light.sunY > 400 ? 380 : 520);
    const w = random.between(120, 320);
    return `<ellipse cx="${x.toFixed(0)}" cy="${y.toFixed(0)}" rx="${w.toFixed(0)}" ry="${(w / 6).toFixed(0)}" fill="#fff" opacity="${random.between(0.15, 0.45).toFixed(2)}"/>`;
  });
  return `<defs>
    <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${light.skyTop}"/><stop offset="1" stop-color="${light.skyHorizon}"/></linearGradient>
    <radialGradient id="sun"><stop offset="0" stop-color="${light.sun}" stop-opacity="1"/><stop offset="0.25" stop-color="${light.sun}" stop-opacity="${light.glow}"/><stop offset="1" stop-color="${light.sun}" stop-opacity="0"/></radialGradient>
  </defs>
  ${rect(0, 0, WIDTH, HORIZON + 40, 'url(#sky)')}
  <circle cx="${sunX.toFixed(0)}" cy="${light.sunY}" r="260" fill="url(#sun)"/>
  ${clouds.join('')}`;
}

function hills(light: Light, look: Look, random: Random): string {
  const layers = [0.55, 0.75].map((shade, layer) => {
    const points = [`0,${HORIZON}`];
    for (let x = 0; x <= WIDTH; x += 100) points.push(`${x},${(HORIZON - random.between(40, 150) * (1 - layer * 0.4)).toFixed(0)}`);
    points.push(`${WIDTH},${HORIZON}`);
    const lightness = light.dark ? 18 + layer * 6 : 48 + layer * 8;
    return `<polygon points="${points.join(' ')}" fill="${hsl(look.hue + 120, 25, lightness * shade + 10)}" opacity="0.85"/>`;
  });
  return layers.join('');
}

/** A grid of windows on a building face; some lit at dusk. */
function windows(x: number, y: number, w: number, h: number, light: Light, random: Random): string {
  const columns = Math.max(2, Math.floor(w / 26));
  const rows = Math.max(2, Math.floor(h / 34));
  const cellW = w / columns;
  const cellH = h / rows;
  const out: string[] = [];
  for (let row = 0; row < rows - 1; row++) {
    for (let column = 0; column < columns; column++) {
      const lit = light.dark ? random.chance(0.55) : random.chance(0.1);
      const fill = lit ? (light.dark ? '#ffd98a' : '#fff4cc') : light.dark ? '#1d2433' : '#9fc1dc';
      out.push(rect(x + column * cellW + cellW * 0.2, y + row * cellH + cellH * 0.3, cellW * 0.6, cellH * 0.5, fill, light.dark ? '' : ' opacity="0.9"'));
    }
  }
  return out.join('');
}

function tower(x: number, w: number, h: number, light: Light, look: Look, random: Random): string {
  const top = HORIZON - h;
  const body = light.dark ? hsl(look.hue, 18, random.between(16, 26)) : hsl(look.hue, random.between(8, 22), random.between(66, 86));
  const side = light.dark ? hsl(look.hue, 18, 12) : hsl(look.hue, 12, 56);
  const roof = random.chance(0.4) ? rect(x + w * 0.3, top - 24, w * 0.4, 24, side) : '';
  return roof + rect(x, top, w, h, body) + rect(x + w * 0.86, top, w * 0.14, h, side) + windows(x + 8, top + 14, w * 0.8, h - 20, light, random);
}

function skyline(light: Light, look: Look, random: Random, count: number, maxHeight: number): string {
  const out: string[] = [];
  let x = random.between(-60, 60);
  for (let i = 0; i < count && x < WIDTH; i++) {
    const w = random.between(130, 230);
    out.push(tower(x, w, random.between(maxHeight * 0.45, maxHeight), light, look, random));
    x += w + random.between(-30, 70);
  }
  return out.join('');
}

function house(x: number, w: number, light: Light, look: Look, random: Random): string {
  const h = w * random.between(0.55, 0.8);
  const base = HORIZON + 60;
  const wall = light.dark ? hsl(look.hue + 30, 20, 30) : hsl(look.hue + random.between(-20, 40), random.between(25, 55), random.between(72, 88));
  const roofColor = light.dark ? hsl(look.hue, 25, 16) : hsl(random.pick([8, 16, 200, 25]), random.between(35, 60), random.between(28, 42));
  const roof = `<polygon points="${(x - 14).toFixed(0)},${(base - h).toFixed(0)} ${(x + w / 2).toFixed(0)},${(base - h - w * 0.4).toFixed(0)} ${(x + w + 14).toFixed(0)},${(base - h).toFixed(0)}" fill="${roofColor}"/>`;
  const windowFill = light.dark ? '#ffd98a' : '#a9cbe4';
  return rect(x, base - h, w, h, wall) + roof
    + rect(x + w * 0.12, base - h * 0.72, w * 0.24, h * 0.3, windowFill)
    + rect(x + w * 0.62, base - h * 0.72, w * 0.24, h * 0.3, windowFill)
    + rect(x + w * 0.42, base - h * 0.5, w * 0.16, h * 0.5, light.dark ? '#3b2a20' : hsl(25, 45, 30));
}

function houses(light: Light, look: Look, random: Random): string {
  const out: string[] = [];
  for (let x = random.between(-40, 40); x < WIDTH; ) {
    const w = random.between(210, 290);
    out.push(house(x, w, light, look, random));
    x += w + random.between(60, 120);
  }
  return out.join('');
}

function tree(x: number, y: number, size: number, light: Light, random: Random): string {
  const leaf = light.dark ? hsl(120, 20, 14) : hsl(random.between(95, 135), random.between(35, 55), random.between(28, 40));
  return rect(x - size * 0.06, y - size * 0.7, size * 0.12, size * 0.7, light.dark ? '#1a1410' : '#5a3d26')
    + `<circle cx="${x.toFixed(0)}" cy="${(y - size * 0.85).toFixed(0)}" r="${(size * 0.42).toFixed(0)}" fill="${leaf}"/>`
    + `<circle cx="${(x - size * 0.25).toFixed(0)}" cy="${(y - size * 0.7).toFixed(0)}" r="${(size * 0.3).toFixed(0)}" fill="${leaf}"/>`;
}

function ground(light: Light): string {
  const grass = light.dark ? hsl(110, 20, 14) : hsl(100, 38, 42);
  const road = light.dark ? '#23252b' : '#6f7378';
  return rect(0, HORIZON, WIDTH, HEIGHT - HORIZON, grass) + rect(0, HEIGHT - 150, WIDTH, 150, road)
    + Array.from({ length: 8 }, (_, i) => rect(i * 220 + 40, HEIGHT - 126, 120, 8, '#e8e2c8')).join('');
}

function pool(light: Light, random: Random): string {
  const y = HORIZON + 70;
  const water = light.dark ? '#1f4d6b' : '#3fb6d8';
  const ripples = Array.from({ length: 14 }, () =>
    rect(random.between(220, 1300), random.between(y + 20, y + 170), random.between(60, 180), 4, '#ffffff', ` opacity="${random.between(0.2, 0.5).toFixed(2)}"`));
  return rect(140, y - 16, WIDTH - 280, 232, '#e9e4d8') + rect(170, y, WIDTH - 340, 200, water) + ripples.join('');
}

/** The title on a dark band at the bottom, smaller when long so it fits (about 0.6 em a character). */
function caption(text: string): string {
  const size = Math.min(44, Math.floor((WIDTH - 96) / (text.length * 0.62)));
  return `${rect(0, HEIGHT - 96, WIDTH, 96, '#000', ' opacity="0.35"')}
  <text x="48" y="${HEIGHT - 48 + size * 0.36}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="${size}" font-weight="bold" fill="#fff">${escapeHtml(text)}</text>`;
}

/** The SVG of one picture. */
export function sceneSvg(scene: Scene, look: Look, title: string, random: Random): string {
  const light: Light = LIGHTS[look.light];
  const parts = [sky(light, random), hills(light, look, random)];
  if (scene === 'skyline') parts.push(skyline(light, look, random, 9, 620), ground(light));
  if (scene === 'plaza') parts.push(skyline(light, look, random, 6, 460), ground(light), rect(0, HORIZON, WIDTH, 90, light.dark ? '#3a3a40' : '#cfc8b8'));
  if (scene === 'houses') parts.push(skyline(light, look, random, 4, 220), ground(light), houses(light, look, random));
  if (scene === 'pool') parts.push(skyline(light, look, random, 3, 380), ground(light), pool(light, random));
  for (let x = random.between(0, 120); x < WIDTH; x += random.between(180, 360)) parts.push(tree(x, HEIGHT - 150, random.between(110, 190), light, random));
  parts.push(caption(title));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">${parts.join('\n')}</svg>`;
}

/** One picture as a JPEG, as a camera would hand it over. */
export function photo(scene: Scene, look: Look, title: string, random: Random): Promise<Buffer> {
  return sharp(Buffer.from(sceneSvg(scene, look, title, random))).jpeg({ quality: 84 }).toBuffer();
}
