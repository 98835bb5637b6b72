import type { Look, Scene } from './photos.js';

/**
 * What the demo is about: Lumina Land, a Philippine developer of house-and-lot communities, condominiums and a
 * business park. Addresses use example.com and example.net (never a real mailbox); phone numbers are in the
 * +63 format the website's forms take.
 */

export const COMPANY = 'Lumina Land';

export type DemoProject = {
  name: string;
  status: 'active' | 'upcoming' | 'completed' | 'on-hold';
  type: 'residential' | 'commercial' | 'mixed-use';
  stage: string;
  location: string;
  coordinates: { lat: number; lng: number };
  landmarks: { name: string; distance: string }[];
  amenities: string[];
  price: { min: number; max: number };
  description: string;
  published: boolean;
  /** How its photos look, and what they show (the first is the cover). */
  look: Look;
  scenes: Scene[];
  /** The houses (or unit types) it sells, with floor and lot areas in m². */
  models: { name: string; floor: number; lot: number }[];
  units: number;
  /** What a lead asking about it wants. */
  interests: string[];
};

export const PROJECTS: DemoProject[] = [
  {
    name: 'Arcadia Residences',
    status: 'active',
    type: 'residential',
    stage: 'Pre-selling',
    location: 'Santa Rosa, Laguna',
    coordinates: { lat: 14.2843, lng: 121.0889 },
    landmarks: [{ name: 'Nuvali', distance: '4 km' }, { name: 'SLEX Santa Rosa exit', distance: '2.5 km' }, { name: 'Xavier School Nuvali', distance: '5 km' }],
    amenities: ['Clubhouse', 'Swimming Pool', "Children's Playground", 'Jogging Path', '24/7 Security'],
    price: { min: 4_200_000, max: 9_800_000 },
    description: `A gated community of two-storey homes on tree-lined streets, twenty minutes from Nuvali.

## Why Arcadia
- Three house models, from a 3-bedroom starter home to a 4-bedroom corner unit with a garden
- A clubhouse, a 25-metre pool and a jogging path around the central park
- Flood-free: the whole estate sits 40 metres above sea level

Reservation fee of ₱20,000; 15% downpayment payable in 24 months; bank and Pag-IBIG financing accepted.`,
    published: true,
    look: { light: 'golden', hue: 30 },
    scenes: ['houses', 'pool', 'houses', 'plaza'],
    models: [{ name: 'Amara', floor: 72, lot: 110 }, { name: 'Bella', floor: 96, lot: 132 }, { name: 'Celine', floor: 128, lot: 180 }],
    units: 10,
    interests: ['3-bedroom Bella model in Arcadia Residences', 'Celine corner unit with a garden', 'Amara starter home, Pag-IBIG financing'],
  },
  {
    name: 'Bayview Heights',
    status: 'upcoming',
    type: 'residential',
    stage: 'Pre-selling',
    location: 'Lahug, Cebu City',
    coordinates: { lat: 10.3312, lng: 123.8986 },
    landmarks: [{ name: 'IT Park', distance: '1.2 km' }, { name: 'Ayala Center Cebu', distance: '3 km' }, { name: 'Mactan-Cebu International Airport', distance: '14 km' }],
    amenities: ['Swimming Pool', 'Fitness Gym', 'Co-working Lounge', '24/7 Security'],
    price: { min: 3_100_000, max: 12_500_000 },
    description: `Two 32-storey towers on the hills of Lahug, with views of the Mactan Channel.

Studios, one- and two-bedroom units and a limited number of penthouses. Walking distance to IT Park;
turnover of Tower 1 is planned for the last quarter of 2028.`,
    published: true,
    look: { light: 'dawn', hue: 210 },
    scenes: ['skyline', 'pool', 'plaza', 'skyline', 'skyline'],
    models: [{ name: 'Studio', floor: 24, lot: 0 }, { name: 'One-bedroom', floor: 38, lot: 0 }, { name: 'Two-bedroom', floor: 62, lot: 0 }],
    units: 8,
    interests: ['Studio in Bayview Heights to rent out', 'Two-bedroom unit with a sea view in Bayview Heights', 'One-bedroom near IT Park'],
  },
  {
    name: 'Harborfront Commerce Center',
    status: 'completed',
    type: 'commercial',
    stage: 'Ready for occupancy',
    location: 'Iloilo Business District, Iloilo City',
    coordinates: { lat: 10.7202, lng: 122.5462 },
    landmarks: [{ name: 'Iloilo Esplanade', distance: '800 m' }, { name: 'Iloilo Convention Center', distance: '1.5 km' }],
    amenities: ['24/7 Security', 'Function Hall'],
    price: { min: 8_500_000, max: 42_000_000 },
    description: `A twelve-storey office building with retail at street level, PEZA-accredited and ready for occupancy.

Floor plates of 1,800 m², 100% back-up power, and direct access to the Esplanade.`,
    published: true,
    look: { light: 'day', hue: 200 },
    scenes: ['skyline', 'plaza', 'skyline'],
    models: [{ name: 'Office unit', floor: 85, lot: 0 }, { name: 'Corner office', floor: 140, lot: 0 }, { name: 'Retail space', floor: 60, lot: 0 }],
    units: 6,
    interests: ['Office space of about 150 m² in Harborfront', 'Retail space on the ground floor of Harborfront Commerce Center'],
  },
  {
    name: 'Verdana Townhomes',
    status: 'completed',
    type: 'residential',
    stage: 'Turned over',
    location: 'Lipa, Batangas',
    coordinates: { lat: 13.9411, lng: 121.1631 },
    landmarks: [{ name: 'SM City Lipa', distance: '3 km' }, { name: 'STAR Tollway Lipa exit', distance: '4 km' }],
    amenities: ['Landscaped Park', "Children's Playground", 'Basketball Court', '24/7 Security'],
    price: { min: 2_600_000, max: 3_900_000 },
    description: `Eighty townhouses around a central park, every one of them turned over to its owners.

A few resale and returned units are available from time to time: ask our sales team.`,
    published: true,
    look: { light: 'day', hue: 40 },
    scenes: ['houses', 'houses', 'pool'],
    models: [{ name: 'Inner townhouse', floor: 54, lot: 60 }, { name: 'End townhouse', floor: 60, lot: 80 }],
    units: 4,
    interests: ['Resale townhouse in Verdana Townhomes', 'Ready-for-occupancy home in Lipa'],
  },
  {
    name: 'Ridgecrest Estates',
    status: 'on-hold',
    type: 'residential',
    stage: 'Land development',
    location: 'Tagaytay, Cavite',
    coordinates: { lat: 14.1153, lng: 120.9621 },
    landmarks: [{ name: 'Tagaytay Rotunda', distance: '6 km' }, { name: "People's Park in the Sky", distance: '9 km' }],
    amenities: ['Clubhouse', 'Landscaped Park', 'Jogging Path'],
    price: { min: 6_000_000, max: 15_000_000 },
    description: `Lots of 300 to 600 m² on the ridge, facing Taal Lake. Development is paused while the access road is widened.`,
    published: false,
    look: { light: 'dusk', hue: 260 },
    scenes: ['houses', 'plaza', 'houses'],
    models: [{ name: 'Vista lot', floor: 0, lot: 320 }, { name: 'Ridge lot', floor: 0, lot: 540 }],
    units: 4,
    interests: ['Lot facing Taal Lake in Ridgecrest Estates', 'Vacation home lot in Tagaytay'],
  },
  {
    name: 'Maple Grove Village',
    status: 'active',
    type: 'mixed-use',
    stage: 'Under construction',
    location: 'General Trias, Cavite',
    coordinates: { lat: 14.3869, lng: 120.8808 },
    landmarks: [{ name: 'CALAX General Trias exit', distance: '3 km' }, { name: 'Robinsons Place General Trias', distance: '2 km' }, { name: 'Lyceum of the Philippines Cavite', distance: '4 km' }],
    amenities: ['Clubhouse', 'Swimming Pool', 'Fitness Gym', 'Basketball Court', 'Function Hall', 'Co-working Lounge'],
    price: { min: 3_500_000, max: 11_000_000 },
    description: `Homes, a village mall and offices in one 40-hectare township.

- Phase 1: 180 house-and-lot units, now under construction
- The Grove Mall opens with Phase 1
- A school and a chapel within walking distance`,
    published: true,
    look: { light: 'golden', hue: 120 },
    scenes: ['plaza', 'houses', 'pool', 'skyline'],
    models: [{ name: 'Maple', floor: 68, lot: 100 }, { name: 'Oak', floor: 88, lot: 120 }, { name: 'Shop-house', floor: 110, lot: 90 }],
    units: 8,
    interests: ['Oak model house in Maple Grove Village', 'Shop-house for a small business', 'House and lot near the Grove Mall'],
  },
];

export const AMENITIES = [
  { name: 'Swimming Pool', category: 'Recreation', icon: 'pool', description: 'A 25-metre lap pool and a shallow kiddie pool, open 6 am to 9 pm.' },
  { name: 'Clubhouse', category: 'Community', icon: 'house', description: 'Lounge, game room and a kitchen residents may book for gatherings.' },
  { name: 'Fitness Gym', category: 'Wellness', icon: 'fitness_center', description: 'Cardio and weight equipment, air-conditioned, with lockers.' },
  { name: "Children's Playground", category: 'Recreation', icon: 'child_care', description: 'Rubber-matted play area with slides and swings, in view of the clubhouse.' },
  { name: 'Basketball Court', category: 'Sports', icon: 'sports_basketball', description: 'A full-size covered court with night lighting.' },
  { name: 'Jogging Path', category: 'Wellness', icon: 'directions_run', description: 'A shaded 1.2 km loop around the central park.' },
  { name: '24/7 Security', category: 'Security', icon: 'security', description: 'Guarded gates, CCTV on every street and a roving patrol.' },
  { name: 'Function Hall', category: 'Community', icon: 'celebration', description: 'Seats 150 for weddings, birthdays and association meetings.' },
  { name: 'Landscaped Park', category: 'Recreation', icon: 'park', description: 'Lawns, native trees and benches at the heart of the community.' },
  { name: 'Co-working Lounge', category: 'Community', icon: 'work', description: 'Fibre internet, quiet booths and a meeting room for residents who work from home.' },
];

export type DemoArticle = { title: string; type: 'news' | 'announcement' | 'blog'; tags: string[]; published: boolean; daysAgo: number; look: Look; scene: Scene; content: string };

export const ARTICLES: DemoArticle[] = [
  {
    title: 'Arcadia Residences opens its model houses',
    type: 'news', tags: ['arcadia-residences', 'model-houses', 'laguna'], published: true, daysAgo: 12,
    look: { light: 'golden', hue: 30 }, scene: 'houses',
    content: `The Amara, Bella and Celine model houses of **Arcadia Residences** in Santa Rosa, Laguna are open for viewing
every day from 9 am to 5 pm.

## What you will see
- The fully furnished **Bella**, our best-selling 3-bedroom home
- The **Celine** corner unit with its garden and carport for two cars
- The clubhouse and pool, now 80% complete

Book a tripping with any of our sales executives, or simply drop by: the site office is at the Arcadia gate on
Santa Rosa–Tagaytay Road.`,
  },
  {
    title: 'Bayview Heights breaks ground in Lahug',
    type: 'news', tags: ['bayview-heights', 'cebu'], published: true, daysAgo: 40,
    look: { light: 'dawn', hue: 210 }, scene: 'skyline',
    content: `${COMPANY} broke ground on **Bayview Heights**, its first residential towers in Cebu, in a ceremony attended by
city officials and our first buyers.

Tower 1 rises to 32 storeys and holds 410 units. Pre-selling prices start at ₱3.1 million for a studio.

> "Cebu's IT workers deserve homes within walking distance of their offices." — our President`,
  },
  {
    title: 'New office hours for the holidays',
    type: 'announcement', tags: ['office-hours'], published: true, daysAgo: 5,
    look: { light: 'day', hue: 200 }, scene: 'plaza',
    content: `Our sales offices and the customer care desk keep these hours over the holidays:

| Day | Hours |
|---|---|
| December 24 and 31 | 9 am to 12 noon |
| December 25 and January 1 | closed |
| Other days | 9 am to 6 pm |

Payments can be made online at any time.`,
  },
  {
    title: 'Five questions to ask before buying a pre-selling home',
    type: 'blog', tags: ['buying-guide', 'pre-selling'], published: true, daysAgo: 63,
    look: { light: 'golden', hue: 120 }, scene: 'houses',
    content: `Buying pre-selling can save you up to 20% — if you ask the right questions first.

1. **Does the developer hold a License to Sell** from the DHSUD for this very phase?
2. **When is turnover**, and what happens if it is late?
3. **What is included**: fences, water heater, kitchen cabinets?
4. **How is the downpayment spread**, and is it interest-free?
5. **Which banks** have already accredited the project?

Our sales executives answer all five in writing. Ask them.`,
  },
  {
    title: 'Pag-IBIG housing loans explained',
    type: 'blog', tags: ['financing', 'pag-ibig', 'buying-guide'], published: true, daysAgo: 88,
    look: { light: 'day', hue: 40 }, scene: 'houses',
    content: `A Pag-IBIG housing loan lends up to ₱6 million for up to 30 years, at rates fixed for 1 to 30 years.

## Who may apply
- Members with at least 24 monthly contributions
- Not older than 65 at the date of application

## What to prepare
- Two valid IDs, your latest payslips and an income tax return
- The *Contract to Sell* from ${COMPANY}

Our documentation team files the application for you at no charge.`,
  },
  {
    title: 'Verdana Townhomes: every unit turned over',
    type: 'announcement', tags: ['verdana-townhomes', 'batangas'], published: true, daysAgo: 120,
    look: { light: 'day', hue: 40 }, scene: 'pool',
    content: `The last of the eighty townhouses of **Verdana Townhomes** in Lipa was turned over this month.

Thank you to the homeowners' association for a smooth hand-over of the park, the playground and the court.`,
  },
  {
    title: 'Maple Grove Village: construction update',
    type: 'news', tags: ['maple-grove-village', 'construction'], published: false, daysAgo: 0,
    look: { light: 'golden', hue: 120 }, scene: 'plaza',
    content: `*Draft — photos from the site visit to follow.*

Phase 1 roads are paved and the first 40 houses have their roofs. The Grove Mall's foundation works start next month.`,
  },
  {
    title: 'Working from home in a Lumina community',
    type: 'blog', tags: ['lifestyle', 'co-working'], published: false, daysAgo: 0,
    look: { light: 'dusk', hue: 260 }, scene: 'skyline',
    content: `*Draft.*

Fibre in every street, a co-working lounge at the clubhouse and quiet hours after 10 pm: how our communities are
planned for people who work from home.`,
  },
];

export const CAREERS = [
  {
    title: 'Sales Executive', department: 'Sales', location: 'Santa Rosa, Laguna', employment_type: 'full-time' as const, published: true,
    salary_range: { min: 25_000, max: 40_000, currency: 'PHP' },
    description: `Show families around Arcadia Residences and guide them from the first visit to the signed *Contract to Sell*.

## You have
- A bachelor's degree and a driver's licence
- A PRC real estate salesperson accreditation, or the wish to get one (we pay for it)

Base pay plus commission.`,
  },
  {
    title: 'Property Manager', department: 'Property Management', location: 'Lipa, Batangas', employment_type: 'full-time' as const, published: true,
    salary_range: { min: 45_000, max: 60_000, currency: 'PHP' },
    description: 'Run the estate office of Verdana Townhomes: maintenance, security contractors and the homeowners\' association.',
  },
  {
    title: 'Architectural Designer', department: 'Design and Planning', location: 'Makati City', employment_type: 'contract' as const, published: true,
    salary_range: { min: 50_000, max: 70_000, currency: 'PHP' },
    description: 'A one-year contract to design the house models of Maple Grove Village Phase 2. Licensed architect; Revit.',
  },
  {
    title: 'Customer Care Associate', department: 'Customer Care', location: 'Cebu City', employment_type: 'part-time' as const, published: true,
    salary_range: null,
    description: 'Answer buyers of Bayview Heights by phone, e-mail and chat, four hours a day on weekdays.',
  },
  {
    title: 'Marketing Associate', department: 'Marketing', location: 'Makati City', employment_type: 'full-time' as const, published: false,
    salary_range: { min: 28_000, max: 35_000, currency: 'PHP' },
    description: 'The position has been filled; kept for next year\'s opening.',
  },
];

export const DEPARTMENTS = ['Management', 'Sales', 'Marketing', 'Customer Care', 'Property Management'];

/** The staff who work the leads and inquiries besides the demo administrator. */
/** Staff; `scope`: which crm records they see (one of each: an agent her own, an agent his department's, the rest all). */
export const STAFF = [
  { name: 'Maria Santos', email: 'maria.santos@example.com', department: 'Sales', grants: { crm: 'rwd', cms: 'r' }, scope: 'own' },
  { name: 'Paolo Reyes', email: 'paolo.reyes@example.com', department: 'Sales', grants: { crm: 'rw' }, scope: 'department' },
  { name: 'Carla Mendoza', email: 'carla.mendoza@example.com', department: 'Marketing', grants: { cms: 'rwd', crm: 'r' }, scope: 'all' },
  { name: 'Jose Villanueva', email: 'jose.villanueva@example.com', department: 'Customer Care', grants: { crm: 'rw' }, scope: 'all' },
] as const;

/** What staff write on a lead's timeline, by kind. */
export const CALL_NOTES = {
  answered: ['Interested; asked for the price list and payment terms.', 'Talked about the two-bedroom units; will visit with the family.', 'Asked about bank financing; sent the requirements.'],
  no_answer: ['No answer; try again tomorrow morning.', 'Rang out twice.'],
  busy: ['Line busy; texted instead.'],
  voicemail: ['Left a voicemail with my number.'],
} as const;
export const EMAIL_NOTES = ['Sent the brochure and the price list.', 'Sent the sample computation for a 20% down payment.', 'Sent the reservation requirements and the site map.'];
export const MEETING_PLACES = ['Site office, model house row', 'Sales gallery, ground floor', 'Coffee shop near their office'];
export const LOST_NOTES = ['Bought elsewhere, closer to their work.', 'Budget on hold until next year.', 'Not reachable after three tries.'];
export const FOLLOW_UPS = ['Call back about the payment terms', 'Send the updated price list', 'Confirm the site visit on Saturday', 'Ask for the reservation requirements', 'Check if the bank pre-approved the loan'];

export const FIRST_NAMES = [
  'Juan', 'Maria', 'Jose', 'Ana', 'Miguel', 'Sofia', 'Gabriel', 'Isabel', 'Rafael', 'Camille', 'Andres', 'Patricia', 'Carlo', 'Bea',
  'Marco', 'Kristine', 'Nicole', 'Enrique', 'Jasmine', 'Ramon', 'Angelica', 'Luis', 'Katrina', 'Francis', 'Joanna', 'Mark', 'Liza',
  'Daniel', 'Grace', 'Antonio', 'Rowena', 'Jerome', 'Cristina', 'Paul', 'Mae', 'Vincent', 'Teresa', 'Noel', 'Elaine', 'Arnel',
];

export const LAST_NAMES = [
  'Santos', 'Reyes', 'Cruz', 'Bautista', 'Ocampo', 'Garcia', 'Mendoza', 'Torres', 'Tomas', 'Andrada', 'Castillo', 'Flores',
  'Villanueva', 'Ramos', 'Castro', 'Rivera', 'Aquino', 'Navarro', 'Salazar', 'Mercado', 'Dela Cruz', 'Del Rosario', 'Gonzales',
  'Lim', 'Tan', 'Sy', 'Uy', 'Domingo', 'Pascual', 'Soriano', 'Manalo', 'Dizon', 'Fernandez', 'Valdez', 'Lopez', 'Aguilar',
];

export const MAIL_DOMAINS = ['example.com', 'example.net', 'example.org'];

/** What leads say they want when no one project is what they ask about. */
export const GENERAL_INTERESTS = ['Ready-for-occupancy home, move in this year', 'Investment property with rental income', 'Townhouse for a young family', 'Lot only, to build later'];

export const LEAD_NOTES = [
  'Prefers a unit facing east. Asked for a sample computation.',
  'Will visit the model house with the family on Saturday.',
  'OFW in Dubai; call after 6 pm Manila time.',
  'Bank financing pre-approved with BPI.',
  'Wants Pag-IBIG financing; sent the checklist.',
  'Asked for a discount on spot cash payment.',
  'Comparing with two other developers in the area.',
  'Budget up to ₱5M; flexible on location.',
];

/** How a lead of each source came to us. */
export const SOURCE_NOTES = {
  website: 'Filled in the form on the project page.',
  referral: 'Referred by an Arcadia homeowner (Mrs. Cruz).',
  event: 'Met at the Home Expo booth in SMX.',
  social: 'Messaged us on Facebook after the open-house post.',
} as const;

export const STATUS_NOTES: Record<string, string> = {
  contacted: 'Called; sent the brochure and the price list.',
  qualified: 'Site visit done; budget and financing confirmed.',
  converted: 'Reserved a unit; documents submitted.',
  lost: 'Bought from another developer.',
};

/** What visitors write about; each about one of the projects it fits. */
export const INQUIRY_TOPICS: { subject: string; message: string; projects: string[] }[] = [
  { subject: 'Schedule of a site visit', message: 'Good day! May we visit the model houses this Sunday afternoon? We are a family of four.', projects: ['Arcadia Residences', 'Maple Grove Village'] },
  { subject: 'Payment terms', message: 'Could you send me the payment terms and a sample computation?', projects: ['Arcadia Residences', 'Bayview Heights', 'Maple Grove Village', 'Harborfront Commerce Center'] },
  { subject: 'Availability of corner lots', message: 'Are there still corner lots available in Phase 1? I would prefer one near the park.', projects: ['Arcadia Residences', 'Maple Grove Village'] },
  { subject: 'Pag-IBIG financing', message: 'Is the project accredited for Pag-IBIG housing loans? I have 5 years of contributions.', projects: ['Arcadia Residences', 'Maple Grove Village', 'Verdana Townhomes'] },
  { subject: 'Turnover date', message: 'When will the units of Tower 1 be turned over? I am planning my move.', projects: ['Bayview Heights'] },
  { subject: 'Office space for lease', message: 'We are a BPO looking for about 1,500 m² of office space. Do you lease, or sell only?', projects: ['Harborfront Commerce Center'] },
  { subject: 'Rental management', message: 'If I buy a studio, do you offer a rental management program for investors abroad?', projects: ['Bayview Heights'] },
  { subject: 'Brochure request', message: 'Please e-mail me the brochure and the floor plans of the available house models.', projects: ['Arcadia Residences', 'Maple Grove Village'] },
  { subject: 'Resale units', message: 'Are there resale or returned units available? We would like to move in within three months.', projects: ['Verdana Townhomes'] },
  { subject: 'Reservation refund', message: 'I reserved a unit last month but my loan was declined. Is the reservation fee refundable?', projects: ['Arcadia Residences', 'Bayview Heights'] },
];

export const INQUIRY_RESPONSES = [
  'Thank you for your interest! One of our sales executives will call you today to set a schedule.',
  'Please find the price list and a sample computation attached to this e-mail. Let us know if you have questions.',
  'Yes, the project is Pag-IBIG accredited. Our documentation team can help you file your application.',
];

export const CAMPAIGN = {
  name: 'Open house weekend',
  subject: 'You are invited: Open House Weekend at Arcadia Residences',
  content: `# Open House Weekend

Visit the furnished **Amara**, **Bella** and **Celine** model houses of Arcadia Residences in Santa Rosa, Laguna,
this Saturday and Sunday from 9 am to 5 pm.

- Free shuttle from SM City Santa Rosa every hour
- Reservation fee waived for reservations made during the weekend
- Snacks and a kids' corner at the clubhouse

See you there!

*The ${COMPANY} team*`,
};

export const DRAFT_CAMPAIGN = {
  name: 'Bayview Heights launch (draft)',
  subject: 'Bayview Heights: pre-selling prices for newsletter readers',
  content: `Draft: prices and launch date to be confirmed with Sales.

Studios from **₱3.1 million**, one week before the public launch.`,
};
