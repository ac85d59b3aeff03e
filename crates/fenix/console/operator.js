// Operator pages.
export async function appsPage(ctx) { ctx.heading('Apps'); }
export async function tokensPage(ctx) { ctx.heading('Tokens'); }
export async function settingsPage(ctx) { ctx.heading('Settings'); }
export async function portalLinksPage(ctx) { ctx.heading('Portal links'); }
