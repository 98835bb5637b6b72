import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { App } from '../../types.js';
import { validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { Created, Email, ErrorBody, errorResponses, Message, Nullable, RequiredText, Strict, Timestamp } from '../../http/schemas.js';
import { InquiryInput } from '../crm/inquiries.js';
import { receiveWebsiteInquiry } from '../crm/lead-flow/website.js';
import { CONFIRM_TTL_HOURS, confirmSignUp, signUp } from '../crm/newsletter-signups.js';
import { noticeInquiry } from '../crm/notices.js';
import { fromAPerson, GuardFields, issueFormToken, withoutGuardFields } from './form-guard.js';
import { page, wantsHtml } from './page.js';

const INQUIRY_RECEIVED = 'Thank you, your inquiry has been received';
const SUBSCRIBING = 'Thank you for subscribing';
const CONFIRMED = 'Your subscription is confirmed';
/** One answer for a link that is forged, used already, superseded or expired: it does not say which. */
const LINK_REFUSED = 'This confirmation link is not valid: it may have expired or been used already. Sign up again to receive a new one.';

const GUARD_NOTE = 'Bot defence: `form_token` (from `GET /api/public/form-token`, at least FORM_TOKEN_MIN_SECONDS old, used once) is required '
  + 'unless PUBLIC_FORM_TOKEN=off; `website` is a honeypot that must stay empty; with CAPTCHA_PROVIDER set, the widget\'s response is required '
  + '(`captcha_token`, `cf-turnstile-response` or `h-captcha-response`). A submission failing any of these gets exactly the answer a person gets, '
  + 'and nothing is stored or sent. 503 when the CAPTCHA provider cannot be reached (send the form again).';

const PublicInquiryInput = Strict({ ...InquiryInput.properties, ...GuardFields }, { examples: [{
  name: 'Maria Santos', email: 'maria.santos@example.com', phone: '+63 917 555 0123', subject: 'Site visit',
  message: 'I would like to visit the model unit this Saturday.', form_token: 'mi3x9k2a.q7Vb0dW3hK9sLm2pX4tZ1g.9fJ2kLmN0pQ4rS6tU8vW0xY2zA4bC6dE8fG0hI2jK4l', website: '',
}] });

const PublicNewsletterInput = Strict({
  email: Email(),
  name: Type.Optional(Nullable(RequiredText())),
  form: Type.Optional(Nullable(RequiredText({ maxLength: 100, description: 'Which form of the website this is (kept with the consent)', examples: ['footer'] }))),
  consent_text: Type.Optional(Nullable(RequiredText({ maxLength: 2000, description: 'The consent wording the form showed (kept with the consent); default NEWSLETTER_CONSENT_TEXT' }))),
  ...GuardFields,
}, { examples: [{
  email: 'maria.santos@example.com', name: 'Maria Santos', form: 'footer', consent_text: 'Yes, send me the newsletter. I can unsubscribe at any time.',
  form_token: 'mi3x9k2a.q7Vb0dW3hK9sLm2pX4tZ1g.9fJ2kLmN0pQ4rS6tU8vW0xY2zA4bC6dE8fG0hI2jK4l', website: '',
}] });

const FormToken = Strict({
  token: Type.String({ description: 'Send it as `form_token` with the form', examples: ['mi3x9k2a.q7Vb0dW3hK9sLm2pX4tZ1g.9fJ2kLmN0pQ4rS6tU8vW0xY2zA4bC6dE8fG0hI2jK4l'] }),
  not_before: Timestamp({ description: 'A form sent earlier is dropped (FORM_TOKEN_MIN_SECONDS after issue)', examples: ['2026-11-23T09:30:03.000Z'] }),
  expires_at: Timestamp({ description: 'A form sent later is dropped (two hours after issue)', examples: ['2026-11-23T11:30:00.000Z'] }),
}, { title: 'FormToken' });

const ConfirmToken = Type.String({ minLength: 1, maxLength: 2000, description: 'From the link in the confirmation e-mail' });

/** What the website's visitors send: inquiries and newsletter subscriptions (no session; write limit per IP). */
export default async function publicFormRoutes(app: App) {
  const tags = ['public'];

  app.get('/api/public/form-token', {
    schema: {
      tags, security: [], summary: 'A token for one submission of a public form',
      description: 'Fetch it when the form is shown and send it as `form_token`. Signed by the service; valid from `not_before` '
        + '(a few seconds: people take longer than bots to fill in a form) until `expires_at`, for one submission.',
      response: { 200: FormToken, ...errorResponses },
    },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return issueFormToken(app.config);
  });

  app.post('/api/public/inquiries', {
    schema: {
      tags, security: [], summary: 'Send an inquiry from the website; staff see it as unread',
      description: 'With lead flow on (at least one lead-flow rule), the inquiry is also the person\'s lead, in the same transaction: linked to '
        + 'their newest lead with the same e-mail (case-insensitive) or phone (compared by digits), or a new lead (source website, interest the '
        + `subject) that the rules route (channel \`website\`). A known lead is not routed again.\n\n${GUARD_NOTE}`,
      body: PublicInquiryInput,
      response: { 201: Created, ...errorResponses, 503: ErrorBody }, 'x-answer-message': INQUIRY_RECEIVED,
    },
  }, async (request, reply) => {
    // A bot's inquiry gets an id like any other, of a record that does not exist.
    if (!(await fromAPerson(app, request, 'inquiry', request.body))) return reply.code(201).send({ id: uuidv7(), message: INQUIRY_RECEIVED });
    const row = await receiveWebsiteInquiry(app, await actorOf(app, request), withoutGuardFields(request.body));
    noticeInquiry(app, row);
    return reply.code(201).send({ id: row.id, message: INQUIRY_RECEIVED });
  });

  app.post('/api/public/newsletter', {
    schema: {
      tags, security: [], summary: 'Subscribe to the newsletter (the same answer whatever happens)',
      description: `The address is subscribed once the person follows the link e-mailed to it (valid ${CONFIRM_TTL_HOURS} hours, used once; `
        + 'at most one such mail an hour per address; none to an address already subscribed); with NEWSLETTER_DOUBLE_OPT_IN=false, at once. '
        + 'The consent is kept with the subscription: when, the IP and user agent, `form` and `consent_text`. The answer is the same 200 '
        + `for a new, pending, subscribed or unsubscribed address, so nobody learns who is subscribed.\n\n${GUARD_NOTE}`,
      body: PublicNewsletterInput,
      response: { 200: Message, ...errorResponses, 503: ErrorBody }, 'x-answer-message': SUBSCRIBING,
    },
  }, async (request) => {
    const { body } = request;
    if (await fromAPerson(app, request, 'newsletter', body)) {
      await signUp(app, await actorOf(app, request), {
        email: body.email, name: body.name ?? null, form: body.form ?? null, consentText: body.consent_text ?? app.config.newsletterConsentText,
      });
    }
    return { message: SUBSCRIBING };
  });

  const confirm = async (request: FastifyRequest, reply: FastifyReply, token: string, html: boolean) => {
    const email = await confirmSignUp(app, await actorOf(app, request), token);
    if (!email) {
      if (html) return reply.code(400).type('text/html; charset=utf-8').send(page('Link not valid', LINK_REFUSED));
      throw validationError({ token: LINK_REFUSED });
    }
    if (html) return reply.type('text/html; charset=utf-8').send(page(CONFIRMED, `Thank you: ${email} will receive our newsletter. Every newsletter has a link to unsubscribe.`));
    return { message: CONFIRMED };
  };

  const answers = {
    200: { description: 'Confirmed: `{message}` as JSON, or a small HTML page when the client prefers text/html (a browser)', content: { 'application/json': { schema: Message }, 'text/html': { schema: { type: 'string' } } } },
    400: ErrorBody, 429: ErrorBody,
  };

  app.get('/api/public/newsletter/confirm', {
    schema: {
      tags, security: [], 'x-answer-message': CONFIRMED, summary: 'Confirm a newsletter sign-up: the link of the confirmation e-mail',
      description: 'Subscribes the address (audited, `newsletter.subscribed` event). A link that is forged, used already, superseded by a '
        + 'newer mail or expired is refused with one message (400; an HTML page for a browser) that does not say which.',
      querystring: Strict({ token: ConfirmToken }),
      response: answers,
    },
  }, async (request, reply) => confirm(request, reply, request.query.token, wantsHtml(request)));

  app.post('/api/public/newsletter/confirm', {
    schema: {
      tags, security: [], 'x-answer-message': CONFIRMED, summary: 'Confirm a newsletter sign-up from the website\'s own page',
      description: 'For a website whose own page the e-mailed link opens (NEWSLETTER_CONFIRM_URL): that page sends the link\'s token here. '
        + 'Answers as the GET does, in JSON.',
      body: Strict({ token: ConfirmToken }, { examples: [{ token: 'kq1Zx3v9YbN0c2W8e4R6t7U5i1O3p9A2s4D6f8G0h2J' }] }),
      response: { 200: Message, ...errorResponses },
    },
  }, async (request, reply) => confirm(request, reply, request.body.token, false));
}
