import { escapeHtml, layout, type Rendered } from './templates.js';

/** One open follow-up as the morning e-mail lists it. */
export type DigestTask = { title: string; due_at: Date; lead: { id: string; name: string } | null };

/**
 * The morning e-mail: a user's overdue and today's open follow-ups, times in the service's task time zone,
 * each with a link to its lead where it has one, and how to turn the e-mail off.
 */
export function taskDigestMail(
  name: string, day: string, overdue: DigestTask[], today: DigestTask[],
  options: { baseUrl: string; timeZone: string; more: number },
): Rendered {
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: options.timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const date = new Intl.DateTimeFormat('en-GB', { timeZone: options.timeZone, day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const counts = [overdue.length && `${overdue.length} overdue`, today.length && `${today.length} due today`].filter(Boolean).join(', ');
  const subject = `Your follow-ups for ${day}: ${counts}`;
  const leadUrl = (task: DigestTask) => (task.lead ? `${options.baseUrl}/leads/${task.lead.id}` : undefined);
  const line = (task: DigestTask, when: Intl.DateTimeFormat) =>
    `- ${when.format(task.due_at)}  ${task.title}${task.lead ? ` (${task.lead.name}: ${leadUrl(task)})` : ''}`;
  const item = (task: DigestTask, when: Intl.DateTimeFormat) =>
    `<li><strong>${escapeHtml(when.format(task.due_at))}</strong> ${escapeHtml(task.title)}${
      task.lead ? ` — <a href="${escapeHtml(leadUrl(task)!)}">${escapeHtml(task.lead.name)}</a>` : ''}</li>`;
  const sections: [string, DigestTask[], Intl.DateTimeFormat][] = [['Overdue', overdue, date], ['Today', today, time]];
  const shown = sections.filter(([, tasks]) => tasks.length);
  const more = options.more ? `And ${options.more} more: see all of them in the console.` : '';
  const off = 'You get this e-mail on days you have follow-ups due. Turn it off in your account settings (task_digest: false in PATCH /api/auth/preferences).';
  const list = `${options.baseUrl}/tasks`;
  return {
    subject,
    text: `Hello ${name},\n\n${shown.map(([title, tasks, when]) => `${title}:\n${tasks.map((task) => line(task, when)).join('\n')}`).join('\n\n')}\n\n`
      + `${more ? `${more}\n` : ''}All your follow-ups: ${list}\n\n--\n${off}\n`,
    html: layout(subject, `<p>Hello ${escapeHtml(name)},</p>${shown.map(([title, tasks, when]) =>
      `<h3 style="margin-bottom:0.25em">${title}</h3><ul style="margin-top:0">${tasks.map((task) => item(task, when)).join('')}</ul>`).join('')}`
      + `${more ? `<p>${escapeHtml(more)}</p>` : ''}<p><a href="${escapeHtml(list)}">All your follow-ups</a></p>`
      + `<hr><p style="font-size:12px;color:#666">${escapeHtml(off)}</p>`),
  };
}
