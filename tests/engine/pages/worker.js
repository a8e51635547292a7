// A dedicated worker of workers.html: logs whatever the page sends it.
onmessage = (event) => console.log('worker got ' + event.data);
