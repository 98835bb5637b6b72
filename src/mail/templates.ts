/** E-mail templates: each gives a subject, an HTML part and a plain-text part. */
export type Rendered = { subject: string; html: string; text: string };

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Wraps body HTML in a minimal, client-safe layout. */
export const layout = (title: string, bodyHtml: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
  `<body style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#222;max-width:600px;margin:auto">${bodyHtml}</body></html>`;

export function passwordResetMail(name: string, url: string): Rendered {
  const subject = 'Reset your password';
  return {
    subject,
    text: `Hello ${name},\n\nSomeone asked to reset the password of your account. Open this link within one hour to choose a new one:\n\n${url}\n\nIf it was not you, ignore this message: your password stays as it is.\n`,
    html: layout(subject, `<p>Hello ${escapeHtml(name)},</p><p>Someone asked to reset the password of your account. Open this link within one hour to choose a new one:</p><p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p><p>If it was not you, ignore this message: your password stays as it is.</p>`),
  };
}

export function welcomeMail(name: string, email: string, loginUrl: string): Rendered {
  const subject = 'Your account is ready';
  return {
    subject,
    text: `Hello ${name},\n\nAn account has been created for you (${email}). Sign in at:\n\n${loginUrl}\n\nUse the password your administrator gave you, then change it under Privacy and Security, where you can also turn on two-factor authentication.\n`,
    html: layout(subject, `<p>Hello ${escapeHtml(name)},</p><p>An account has been created for you (${escapeHtml(email)}). Sign in at:</p><p><a href="${escapeHtml(loginUrl)}">${escapeHtml(loginUrl)}</a></p><p>Use the password your administrator gave you, then change it under Privacy and Security, where you can also turn on two-factor authentication.</p>`),
  };
}

export function inquiryResponseMail(name: string, subject: string, response: string, original: string): Rendered {
  const title = `Re: ${subject}`;
  const quoted = original.split('\n').map((line) => `> ${line}`).join('\n');
  return {
    subject: title,
    text: `Hello ${name},\n\n${response}\n\n${quoted}\n`,
    html: layout(title, `<p>Hello ${escapeHtml(name)},</p><p style="white-space:pre-wrap">${escapeHtml(response)}</p>` +
      `<blockquote style="color:#666;border-left:3px solid #ccc;margin:1em 0;padding-left:1em;white-space:pre-wrap">${escapeHtml(original)}</blockquote>`),
  };
}

const NEWSLETTER_NOTE = 'You receive this e-mail because you subscribed to our newsletter.';

/** A campaign as one recipient gets it: its content (Markdown and the HTML rendered from it) and the unsubscribe link. */
export function campaignMail(subject: string, markdown: string, html: string, unsubscribeUrl: string): Rendered {
  return {
    subject,
    html: layout(subject, `${html}<hr><p style="font-size:12px;color:#666">${NEWSLETTER_NOTE} <a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a></p>`),
    text: `${markdown}\n\n--\n${NEWSLETTER_NOTE} Unsubscribe: ${unsubscribeUrl}\n`,
  };
}

/** To staff: a visitor sent an inquiry through the website. */
export function inquiryNoticeMail(inquiry: { name: string; email: string; phone: string | null; subject: string; message: string }, url: string): Rendered {
  const subject = `New inquiry: ${inquiry.subject}`;
  const from = `${inquiry.name} <${inquiry.email}>${inquiry.phone ? `, ${inquiry.phone}` : ''}`;
  return {
    subject,
    text: `A new inquiry arrived through the website.\n\nFrom: ${from}\nSubject: ${inquiry.subject}\n\n${inquiry.message}\n\nAnswer it in the console:\n${url}\n`,
    html: layout(subject, `<p>A new inquiry arrived through the website.</p><p><strong>From:</strong> ${escapeHtml(from)}<br><strong>Subject:</strong> ${escapeHtml(inquiry.subject)}</p>` +
      `<blockquote style="border-left:3px solid #ccc;margin:1em 0;padding-left:1em;white-space:pre-wrap">${escapeHtml(inquiry.message)}</blockquote>` +
      `<p><a href="${escapeHtml(url)}">Answer it in the console</a></p>`),
  };
}

/** To a staff member: a lead was assigned to them. */
export function leadAssignedMail(name: string, lead: { first_name: string; last_name: string; email: string | null; phone: string | null; interest: string | null }, by: string | null, url: string): Rendered {
  const who = `${lead.first_name} ${lead.last_name}`;
  const subject = `Lead assigned to you: ${who}`;
  const contact = [lead.email, lead.phone].filter(Boolean).join(', ');
  const intro = by ? `${by} assigned a lead to you.` : 'A lead was assigned to you.';
  return {
    subject,
    text: `Hello ${name},\n\n${intro}\n\n${who}${contact ? ` (${contact})` : ''}${lead.interest ? `\nInterested in: ${lead.interest}` : ''}\n\nOpen it in the console:\n${url}\n`,
    html: layout(subject, `<p>Hello ${escapeHtml(name)},</p><p>${escapeHtml(intro)}</p><p><strong>${escapeHtml(who)}</strong>${contact ? ` (${escapeHtml(contact)})` : ''}` +
      `${lead.interest ? `<br>Interested in: ${escapeHtml(lead.interest)}` : ''}</p><p><a href="${escapeHtml(url)}">Open it in the console</a></p>`),
  };
}

/**
 * To a staff member: the e-mail half of an in-app notification that has no template of its own (an @mention), with the
 * same title and text as the notification and a link to its record.
 */
export function notificationMail(name: string, notification: { title: string; body: string }, url: string | null): Rendered {
  const subject = notification.title;
  return {
    subject,
    text: `Hello ${name},\n\n${notification.title}\n\n${notification.body}\n${url ? `\nOpen it in the console:\n${url}\n` : ''}`,
    html: layout(subject, `<p>Hello ${escapeHtml(name)},</p><p><strong>${escapeHtml(notification.title)}</strong></p>` +
      `<blockquote style="border-left:3px solid #ccc;margin:1em 0;padding-left:1em;white-space:pre-wrap">${escapeHtml(notification.body)}</blockquote>` +
      `${url ? `<p><a href="${escapeHtml(url)}">Open it in the console</a></p>` : ''}`),
  };
}

/** To a visitor who signed up for the newsletter on the website: the link that confirms the address. */
export function newsletterConfirmMail(url: string, hours: number): Rendered {
  const subject = 'Confirm your newsletter subscription';
  const lead = 'Someone, hopefully you, asked to receive our newsletter at this address.';
  const ask = `Open this link within ${hours} hours to confirm:`;
  const otherwise = 'If it was not you, ignore this message: you will not be subscribed.';
  return {
    subject,
    text: `Hello,\n\n${lead} ${ask}\n\n${url}\n\n${otherwise}\n`,
    html: layout(subject, `<p>Hello,</p><p>${lead} ${ask}</p><p><a href="${escapeHtml(url)}">Confirm my subscription</a></p><p style="font-size:12px;color:#666">${escapeHtml(url)}</p><p>${otherwise}</p>`),
  };
}
