import { escapeHtml, layout, type Rendered } from './templates.js';

/** One section of the weekly e-mail: a report's name, its link and its key figures as label → value (text). */
export type WeeklySection = { title: string; path: string; figures: [string, string][] };

/**
 * The Monday e-mail of the sales reports' key figures for the week before (Monday to Sunday), as the recipient's
 * record scope lets them read them, with a link to each report in the console and how to turn it off.
 */
export function weeklyReportMail(name: string, range: { from: string; to: string }, sections: WeeklySection[], options: { baseUrl: string }): Rendered {
  const subject = `Sales week ${range.from} to ${range.to}`;
  const off = 'You get this e-mail every Monday because you asked for it. Turn it off in your account settings (weekly_report: false in PATCH /api/auth/preferences).';
  const url = (section: WeeklySection) => `${options.baseUrl}/${section.path}`;
  const text = `Hello ${name},\n\nThe week from ${range.from} to ${range.to}:\n\n`
    + sections.map((section) => `${section.title} (${url(section)}):\n${section.figures.map(([label, value]) => `- ${label}: ${value}`).join('\n')}`).join('\n\n')
    + `\n\n--\n${off}\n`;
  const html = layout(subject, `<p>Hello ${escapeHtml(name)},</p><p>The week from ${escapeHtml(range.from)} to ${escapeHtml(range.to)}:</p>`
    + sections.map((section) => `<h3 style="margin-bottom:0.25em"><a href="${escapeHtml(url(section))}">${escapeHtml(section.title)}</a></h3>`
      + `<table style="border-collapse:collapse">${section.figures.map(([label, value]) =>
        `<tr><td style="padding:2px 12px 2px 0">${escapeHtml(label)}</td><td style="text-align:right"><strong>${escapeHtml(value)}</strong></td></tr>`).join('')}</table>`).join('')
    + `<hr><p style="font-size:12px;color:#666">${escapeHtml(off)}</p>`);
  return { subject, text, html };
}
