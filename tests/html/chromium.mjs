// chromium.mjs - Debian's chromium, headless, in a new empty profile,
// for browser.mjs and render_time.mjs (playwright-core's own browser
// download does not work here: the flags keep it off the network).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function launch() {
	const profile = mkdtempSync(join(tmpdir(), 'profil-chromium-'));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1400, height: 900 },
	});
	return {
		ctx,
		async close() {
			await ctx.close();
			rmSync(profile, { recursive: true, force: true });
		},
	};
}
