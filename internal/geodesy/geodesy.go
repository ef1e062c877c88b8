// Package geodesy measures on the WGS 84 ellipsoid. Distance solves the inverse geodesic
// problem with Vincenty's iteration (accurate to well under a millimetre); for nearly antipodal
// points, where that iteration does not converge, it falls back to a sphere of the same mean
// radius.
//
// Accuracy: agrees with PROJ's geod (Karney's algorithm) to 1 mm on ordinary point pairs; for
// points within about a degree of being antipodal the spherical fallback may be off by up to
// 0.5%.
package geodesy

import (
	"errors"
	"math"

	"github.com/paulmach/orb"
)

// WGS 84.
const (
	A = 6378137.0         // semi-major axis, metres
	F = 1 / 298.257223563 // flattening
	B = A * (1 - F)       // semi-minor axis
)

// ErrInvalid is returned for coordinates that are not longitude/latitude.
var ErrInvalid = errors.New("geodesy: coordinates must be finite, latitude within ±90°")

// Distance returns the geodesic distance in metres between two longitude/latitude points.
func Distance(p, q orb.Point) (float64, error) {
	for _, v := range []float64{p[0], p[1], q[0], q[1]} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, ErrInvalid
		}
	}
	if math.Abs(p[1]) > 90 || math.Abs(q[1]) > 90 {
		return 0, ErrInvalid
	}
	if d, ok := vincenty(p, q); ok {
		return d, nil
	}
	return sphere(p, q), nil
}

func rad(d float64) float64 { return d * math.Pi / 180 }

func vincenty(p, q orb.Point) (float64, bool) {
	l := rad(q[0] - p[0])
	u1 := math.Atan((1 - F) * math.Tan(rad(p[1])))
	u2 := math.Atan((1 - F) * math.Tan(rad(q[1])))
	sinU1, cosU1 := math.Sincos(u1)
	sinU2, cosU2 := math.Sincos(u2)
	lambda := l
	var sinSigma, cosSigma, sigma, cos2Alpha, cos2SigmaM float64
	for i := 0; i < 200; i++ {
		sinLambda, cosLambda := math.Sincos(lambda)
		sinSigma = math.Hypot(cosU2*sinLambda, cosU1*sinU2-sinU1*cosU2*cosLambda)
		if sinSigma == 0 {
			return 0, true // the same point
		}
		cosSigma = sinU1*sinU2 + cosU1*cosU2*cosLambda
		sigma = math.Atan2(sinSigma, cosSigma)
		sinAlpha := cosU1 * cosU2 * sinLambda / sinSigma
		cos2Alpha = 1 - sinAlpha*sinAlpha
		if cos2Alpha != 0 {
			cos2SigmaM = cosSigma - 2*sinU1*sinU2/cos2Alpha
		} else {
			cos2SigmaM = 0 // both points on the equator
		}
		c := F / 16 * cos2Alpha * (4 + F*(4-3*cos2Alpha))
		prev := lambda
		lambda = l + (1-c)*F*sinAlpha*(sigma+c*sinSigma*(cos2SigmaM+c*cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)))
		if math.Abs(lambda-prev) < 1e-13 {
			u2 := cos2Alpha * (A*A - B*B) / (B * B)
			bigA := 1 + u2/16384*(4096+u2*(-768+u2*(320-175*u2)))
			bigB := u2 / 1024 * (256 + u2*(-128+u2*(74-47*u2)))
			deltaSigma := bigB * sinSigma * (cos2SigmaM + bigB/4*(cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)-
				bigB/6*cos2SigmaM*(-3+4*sinSigma*sinSigma)*(-3+4*cos2SigmaM*cos2SigmaM)))
			return B * bigA * (sigma - deltaSigma), true
		}
		if math.Abs(lambda) > math.Pi {
			return 0, false // nearly antipodal: no convergence
		}
	}
	return 0, false
}

// sphere is the great-circle distance on a sphere of WGS 84's mean radius.
func sphere(p, q orb.Point) float64 {
	const r = (2*A + B) / 3
	lat1, lat2 := rad(p[1]), rad(q[1])
	dl := rad(q[0] - p[0])
	h := math.Pow(math.Sin((lat2-lat1)/2), 2) + math.Cos(lat1)*math.Cos(lat2)*math.Pow(math.Sin(dl/2), 2)
	return 2 * r * math.Asin(math.Min(1, math.Sqrt(h)))
}
