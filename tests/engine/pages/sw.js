// The service worker of workers.html: logs messages, and answers /via-sw/<path> with its
// own fetch() of /<path> (what an offline test of a PWA exercises).
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => console.warn('service worker got ' + event.data));
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.pathname.startsWith('/via-sw/')) {
    event.respondWith(fetch(url.pathname.slice('/via-sw'.length)));
  }
});
