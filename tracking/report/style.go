package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Palette is the colours of variants, by the variant's place in its
// experiment's variant order (Curve.Index): the eight colours of Okabe and
// Ito ("Color Universal Design", 2008), black moved back and yellow last
// since they read worst as thin lines on white, then four of Paul Tol's
// "muted" scheme that stay apart from them. Every figure of the project
// and the dashboard (which reads it from /api/style) use it: one variant
// has one colour everywhere. Variants past the twelfth reuse colours, with
// another marker shape.
var Palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
	{0x88, 0x22, 0x55, 0xff}, // Tol wine
	{0x99, 0x99, 0x33, 0xff}, // Tol olive
	{0x33, 0x22, 0x88, 0xff}, // Tol indigo
	{0xCC, 0x66, 0x77, 0xff}, // Tol rose
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

// VariantColour is the colour of the variant at index i of its
// experiment's variant order.
func VariantColour(i int) color.NRGBA {
	if i < 0 {
		i = 0
	}
	return Palette[i%len(Palette)]
}

// Hex is a colour as #rrggbb, the form the dashboard draws with.
func Hex(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// PaletteHex is Palette as #rrggbb strings.
func PaletteHex() []string {
	out := make([]string, len(Palette))
	for i, c := range Palette {
		out[i] = Hex(c)
	}
	return out
}

// variantShape is the marker of the variant at index i: a shape per
// colour cycle, so that variants past the twelfth still differ.
func variantShape(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}}
	return shapes[(max(i, 0)/len(Palette)+max(i, 0))%len(shapes)]
}

// withAlpha is c with alpha a.
func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// The one size and font of every figure the project draws (plots of
// metrics, paired differences, the experiments' result figures): 16 cm
// wide, a panel 10 cm high, 9 pt text and 10 pt titles in gonum's default
// face (Liberation Sans), PNG at 300 dpi.
const (
	FigureWidth  = 16 * vg.Centimeter
	PanelHeight  = 10 * vg.Centimeter
	FigureDPI    = 300
	fontSize     = 9
	titleSize    = 10
	lineWidthPts = 1.5
)

// NewFigurePlot returns a plot in the project's figure style: font sizes,
// a grid, and labels that the callers set.
func NewFigurePlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = titleSize
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = fontSize
		ax.Tick.Label.Font.Size = fontSize - 1
	}
	return p
}

// NewFigureLegend returns a legend in the figure style.
func NewFigureLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = font.Length(fontSize)
	return l
}
