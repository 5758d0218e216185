package commands

import (
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"io"
	"strings"
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
