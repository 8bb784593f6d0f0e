// Moments marked data-local are shown in the reader's own time zone: annotators rate from many places,
// and a lease or a deadline is easier to read in local time. The UTC text stays in the tooltip.
for (const element of document.querySelectorAll("time[data-local]")) {
  const when = new Date(element.dateTime);
  if (!Number.isNaN(when.getTime())) {
    element.title = element.textContent;
    element.textContent = when.toLocaleString([], {
      day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short",
    });
  }
}
