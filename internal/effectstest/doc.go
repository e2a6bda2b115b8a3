// Package effectstest holds the test that shows one table of calls on
// every surface an approver reads (the Slack message, the App Home, the
// console's card and the HTTP Ask API) and checks each shows the same
// effect lines, first: the lines are askview's, worked out once when the
// Ask is made, and each surface only renders them.
package effectstest
