package commands

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/urfave/cli/v2"
)

// The ASCII tables the commands print.

// renderTable renders a table in plain ASCII (logs, pipes and any terminal
// show it the same) with the columns named in numeric right-aligned.
func renderTable(w io.Writer, header []string, numeric string, rows [][]string) error {
	align := make([]tw.Align, len(header))
	for i, h := range header {
		align[i] = tw.AlignLeft
		if strings.Contains(" "+numeric+" ", " "+h+" ") {
			align[i] = tw.AlignRight
		}
	}
	table := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			},
			Row: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
			},
		}))
	table.Header(header)
	if err := table.Bulk(rows); err != nil {
		return err
	}
	return table.Render()
}

// tableWidth is the columns a table fits in unless --wide: a terminal's
// default, and what a mail or a ticket shows unwrapped.
const tableWidth = 80

// shortenedMin is the fewest characters a shortened cell keeps.
const shortenedMin = 12

// tableLayout is a table's columns and how it is fitted into tableWidth.
// A table that fits is printed as it is. Else, step by step until it
// fits: its timestamps lose their fraction (2024-05-01 12:00:00, still
// UTC); the columns of below (free text: notes, reasons, paths) leave the
// table and are printed under it whole, one line per row that has any,
// named by the row's first cell ("SEGMENT: text; saved to: path", the
// columns after the first of below named), so nothing is
// cut and grep still finds each; the columns of drop are left out, first
// to last, while narrowing the columns of shorten and wrap cannot make
// room; then the widest of those is narrowed, and so on: the cells of
// shorten cut in the middle ("a-long..name/3"), those of wrap (text)
// wrapped at spaces over several lines. --wide, and JSON, print
// everything in the table.
type tableLayout struct {
	header  []string
	numeric string   // the columns right-aligned
	below   []string // moved under the table
	keyCols int      // the leading columns that name a row under the table, joined by '/'; 0: the first
	drop    []string // left out first to last
	// dropFirst: drop's columns go before any cell is cut (tables whose
	// shortened cells would be paths or names people copy).
	dropFirst bool
	shorten   []string
	wrap      []string
}

// wideFlag is --wide for the commands printing a tableLayout.
func wideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wide", Usage: fmt.Sprintf("print tables whole, even wider than %d columns", tableWidth)}
}

// render renders rows; wide: as they are.
func (l tableLayout) render(w io.Writer, rows [][]string, wide bool) error {
	header := l.header
	var under []string
	if !wide {
		header, rows, under = l.fit(rows)
	}
	if err := renderTable(w, header, l.numeric, rows); err != nil {
		return err
	}
	for _, line := range under {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// fit fits rows into tableWidth, returning the lines to print under the
// table.
func (l tableLayout) fit(rows [][]string) ([]string, [][]string, []string) {
	header := l.header
	widths := columnWidths(header, rows)
	if tableWidthOf(widths) <= tableWidth {
		return header, rows, nil
	}
	for _, row := range rows {
		for i, cell := range row {
			row[i] = compactTime(cell)
		}
	}
	var under []string
	if len(l.below) > 0 && tableWidthOf(columnWidths(header, rows)) > tableWidth {
		header, under = l.moveBelow(header, rows)
	}
	// A column is left out only when narrowing the others cannot make room
	// (with dropFirst, when the table is too wide as it is).
	for _, name := range l.drop {
		widths := columnWidths(header, rows)
		if !l.dropFirst {
			widths = l.narrowest(header, widths)
		}
		if tableWidthOf(widths) <= tableWidth {
			break
		}
		if i := slices.Index(header, name); i >= 0 {
			header = slices.Delete(slices.Clone(header), i, i+1)
			for r := range rows {
				rows[r] = slices.Delete(rows[r], i, i+1)
			}
		}
	}
	// The widest narrowable column loses a character, then the widest
	// again, until the table fits: long columns end up equally narrow.
	widths = columnWidths(header, rows)
	floor := l.narrowest(header, widths)
	target := slices.Clone(widths)
	for excess := tableWidthOf(target) - tableWidth; excess > 0; excess-- {
		widest := -1
		for i := range target {
			if target[i] > floor[i] && (widest < 0 || target[i] > target[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		target[widest]--
	}
	for i, name := range header {
		if target[i] == widths[i] {
			continue
		}
		narrow := shortenCell
		if slices.Contains(l.wrap, name) {
			narrow = wrapCell
		}
		for _, row := range rows {
			row[i] = narrow(row[i], target[i])
		}
	}
	return header, rows, under
}

// moveBelow takes the columns of below out of header and rows, and
// returns the lines saying what they held.
func (l tableLayout) moveBelow(header []string, rows [][]string) ([]string, []string) {
	keys := max(l.keyCols, 1)
	var under []string
	for _, row := range rows {
		var parts []string
		for k, name := range l.below {
			i := slices.Index(header, name)
			if i < keys || row[i] == "" || row[i] == "-" {
				continue
			}
			text := strings.ReplaceAll(row[i], "\n", " ")
			if k > 0 {
				text = strings.ToLower(name) + ": " + text
			}
			parts = append(parts, text)
		}
		if len(parts) > 0 {
			under = append(under, strings.Join(row[:keys], "/")+": "+strings.Join(parts, "; "))
		}
	}
	var kept []string
	for i := len(header) - 1; i >= keys; i-- {
		if slices.Contains(l.below, header[i]) {
			for r := range rows {
				rows[r] = slices.Delete(rows[r], i, i+1)
			}
		}
	}
	for i, name := range header {
		if i < keys || !slices.Contains(l.below, name) {
			kept = append(kept, name)
		}
	}
	return kept, under
}

// narrowest is how narrow each column of widths can be made: a column of
// shorten or wrap down to shortenedMin or its header, the others not at
// all.
func (l tableLayout) narrowest(header []string, widths []int) []int {
	floor := slices.Clone(widths)
	for i, name := range header {
		if slices.Contains(l.shorten, name) || slices.Contains(l.wrap, name) {
			floor[i] = min(widths[i], max(shortenedMin, utf8.RuneCountInString(name)))
		}
	}
	return floor
}

// columnWidths is the width of each column: its widest cell line or
// header.
func columnWidths(header []string, rows [][]string) []int {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for i, cell := range row {
			for line := range strings.SplitSeq(cell, "\n") {
				widths[i] = max(widths[i], utf8.RuneCountInString(line))
			}
		}
	}
	return widths
}

// tableWidthOf is how wide renderTable prints columns this wide: each
// padded by a space on either side, with a border before, between and
// after.
func tableWidthOf(widths []int) int {
	n := 1
	for _, w := range widths {
		n += w + 3
	}
	return n
}

// compactTime prints a time as docs/cli.md prints them
// (2024-05-01T12:00:00.000000000Z) to the second, 2024-05-01 12:00:00;
// other cells are returned as they are.
func compactTime(cell string) string {
	if len(cell) != len("2006-01-02T15:04:05.000000000Z") || cell[10] != 'T' || cell[19] != '.' || cell[len(cell)-1] != 'Z' {
		return cell
	}
	if _, err := time.Parse(time.RFC3339Nano, cell); err != nil {
		return cell
	}
	return cell[:10] + " " + cell[11:19]
}

// shortenCell cuts s to n characters, in the middle, where ".." says
// something was left out: a name's start and its end (a partition number,
// a file's extension) both stay.
func shortenCell(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 2 + 1) / 2
	return string(r[:head]) + ".." + string(r[len(r)-(n-2-head):])
}

// wrapCell wraps s into lines of at most n characters, at spaces where it
// can, and within a word longer than that.
func wrapCell(s string, n int) string {
	var lines []string
	line := ""
	for word := range strings.FieldsSeq(s) {
		for utf8.RuneCountInString(word) > n {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:n])), string(r[n:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	return strings.Join(append(lines, line), "\n")
}
